import { describe, expect, it, vi } from 'vitest';

describe('answer-gateway - the version a write without one is stamped with', () => {
  it('version clock - a bulk ingest of many documents stays on the clock, so a later write of one of them from another process is not older', async () => {
    const { versionNow } = await import('../src/ingestion/version-clock.js');
    let last = 0;
    for (let i = 0; i < 100_000; i++) last = versionNow('acme', 'handbook', `doc-${i}`);
    expect(last).toBeLessThanOrEqual(Date.now());

    // Another gateway replica, or this one restarted: its own memory of stamps is empty.
    vi.resetModules();
    const elsewhere = await import('../src/ingestion/version-clock.js');
    expect(elsewhere.versionNow('acme', 'handbook', 'doc-99999')).toBeGreaterThanOrEqual(last);
  });

  it('version clock - one document stamped again within a millisecond gets a higher version each time; another document is not pushed up by it', async () => {
    const { versionNow } = await import('../src/ingestion/version-clock.js');
    const stamps = Array.from({ length: 50 }, () => versionNow('acme', 'handbook', 'policy'));
    for (let i = 1; i < stamps.length; i++) expect(stamps[i]).toBeGreaterThan(stamps[i - 1] as number);
    expect(versionNow('acme', 'handbook', 'other')).toBeLessThanOrEqual(Date.now());
    // The same document id in another kb or tenant is another document.
    expect(versionNow('acme', 'projects', 'policy')).toBeLessThanOrEqual(Date.now());
    expect(versionNow('globex', 'handbook', 'policy')).toBeLessThanOrEqual(Date.now());
  });
});
