import { describe, expect, it } from 'vitest';
import type { Bus } from '@hopline/bus';
import { codecs, subjects, type IngestCommand__Output } from '@hopline/contracts';
import { makeDocx, makePdf, zipBombDocx } from '@hopline/test-support';

import { bearer, startTestGateway, type TestKey } from './support/harness.js';

/** The first `count` ingest commands stored for the kb, oldest first. */
async function storedCommands(bus: Bus, key: TestKey, count: number): Promise<IngestCommand__Output[]> {
  const stream = await bus.durableStream();
  const reading = new AbortController();
  const commands: IngestCommand__Output[] = [];
  for await (const message of stream.follow(subjects.ingest(key.tenantId, 'projects'), { signal: reading.signal })) {
    commands.push(codecs.ingestCommand.decode(message.data));
    if (commands.length === count) reading.abort();
  }
  return commands;
}

const upload = (baseUrl: string, key: TestKey, files: Array<[name: string, content: string | Buffer]>) => {
  const form = new FormData();
  for (const [name, content] of files) form.append('file', new Blob([content]), name);
  return fetch(`${baseUrl}/v1/kbs/projects/documents`, { method: 'POST', headers: bearer(key), body: form });
};

describe('answer-gateway ingestion - raw files uploaded as multipart/form-data', () => {
  it('upload - PDF, DOCX, HTML, markdown and text files are parsed by the gateway; a corrupt PDF and a file over the limit are refused alone', async () => {
    await using t = await startTestGateway({ config: { INGEST_MAX_DOCUMENT_BYTES: 100_000 } });
    const response = await upload(t.baseUrl, t.keys.alice, [
      ['manual.pdf', makePdf(['Installing the pump.', 'Servicing the pump.'])],
      ['corrupt.pdf', Buffer.concat([makePdf(['Lost.']).subarray(0, 40), Buffer.from('garbage')])],
      [
        'policy.docx',
        await makeDocx([
          ['Title', 'Travel policy'],
          ['Normal', 'Employees book economy class.'],
        ]),
      ],
      ['page.html', '<html><head><title>Pump guide</title></head><body><p>The pump moves water.</p></body></html>'],
      ['huge.txt', 'h'.repeat(150_000)],
      ['notes.md', '# Notes\n\nAtlas is owned by Dana.\n'],
      ['plain.txt', 'Bluefin was founded in 2019.'],
    ]);
    expect(response.status).toBe(202);
    const body = (await response.json()) as {
      accepted: Array<{ docId: string }>;
      refused: Array<{ file: string; problem: { type: string; status: number; detail: string } }>;
    };
    expect(body.accepted.map((entry) => entry.docId).sort()).toEqual(['manual', 'notes', 'page', 'plain', 'policy']);
    expect(body.refused).toEqual([
      {
        file: 'corrupt.pdf',
        problem: expect.objectContaining({
          type: 'urn:hopline:problem:unreadable-document',
          status: 422,
          detail: expect.stringMatching(/^corrupt\.pdf: not a readable PDF/) as unknown,
        }) as unknown,
      },
      {
        file: 'huge.txt',
        problem: expect.objectContaining({
          type: 'urn:hopline:problem:payload-too-large',
          detail: 'the file "huge.txt" exceeds 100000 bytes (INGEST_MAX_DOCUMENT_BYTES)',
        }) as unknown,
      },
    ]);

    const upserts = new Map(
      (await storedCommands(t.bus, t.keys.alice, 5)).map((command) => [command.upsert?.docId, command.upsert]),
    );
    expect(upserts.get('manual')).toMatchObject({
      text: 'Installing the pump.\n\nServicing the pump.',
      sourceUri: 'manual.pdf',
      layout: {
        sections: [
          { start: 0, fragment: 'page=1' },
          { start: 22, fragment: 'page=2' },
        ],
      },
    });
    expect(upserts.get('policy')).toMatchObject({ title: 'Travel policy', sourceUri: 'policy.docx' });
    expect(upserts.get('page')).toMatchObject({ title: 'Pump guide', text: 'The pump moves water.' });
    expect(upserts.get('notes')).toMatchObject({ title: 'Notes', text: 'Atlas is owned by Dana.' });
    expect(upserts.get('plain')).toMatchObject({ title: 'plain', text: 'Bluefin was founded in 2019.' });
  });

  it('upload - a zip-bomb DOCX is refused alone as unreadable (422), parsed off the event loop, and the file after it goes in', async () => {
    await using t = await startTestGateway();
    const bomb = await zipBombDocx(300 * 1024 * 1024);
    const response = await upload(t.baseUrl, t.keys.alice, [
      ['bomb.docx', bomb],
      ['plain.txt', 'Bluefin was founded in 2019.'],
    ]);
    expect(response.status).toBe(202);
    const body = (await response.json()) as {
      accepted: Array<{ docId: string }>;
      refused: Array<{ file: string; problem: { type: string; status: number; detail: string } }>;
    };
    expect(body.accepted.map((entry) => entry.docId)).toEqual(['plain']);
    expect(body.refused).toEqual([
      {
        file: 'bomb.docx',
        problem: expect.objectContaining({
          type: 'urn:hopline:problem:unreadable-document',
          status: 422,
          detail: 'bomb.docx: a DOCX that unpacks to more than 128 MiB (a zip bomb?): split it into smaller documents',
        }) as unknown,
      },
    ]);
  }, 60_000);

  it('upload - a file that finds the parser busy with four others waiting stops its upload with a 503 and Retry-After, not a 422 blaming the file', async () => {
    await using t = await startTestGateway({ config: { RATE_BURST_PER_KEY: 100 } });
    // mammoth takes half a second or so over each of these, one at a time.
    const slow = await makeDocx(
      Array.from({ length: 8_000 }, (_, i): [string, string] => ['Normal', `Paragraph ${i} about pumps and valves.`]),
    );
    const responses = await Promise.all(
      Array.from({ length: 6 }, (_, i) => upload(t.baseUrl, t.keys.alice, [[`slow-${i}.docx`, slow]])),
    );
    const statuses = responses.map((response) => response.status).sort();
    expect(statuses).toEqual([202, 202, 202, 202, 202, 503]);
    const busy = responses.find((response) => response.status === 503) as Response;
    expect(Number(busy.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await busy.json()).toMatchObject({
      type: 'urn:hopline:problem:unavailable',
      detail: expect.stringMatching(
        /^slow-\d\.docx: the document parser is busy: 4 files are waiting for it$/,
      ) as unknown,
    });
  }, 60_000);

  it('upload - a file whose name gives a document id an earlier file of the upload took is refused (409), not written over it; a name that gives no id is refused alone', async () => {
    await using t = await startTestGateway();
    const response = await upload(t.baseUrl, t.keys.alice, [
      ['report.md', '# Report\n\nThe pump moves water.\n'],
      ['report.txt', 'A second report.'],
      ['a b.md', 'Spaced.'],
      ['a-b.md', 'Dashed.'],
      ['!!!.txt', 'No letter or digit in the name.'],
    ]);
    expect(response.status).toBe(202);
    const body = (await response.json()) as {
      accepted: Array<{ docId: string }>;
      refused: Array<{ file: string; problem: { status: number; detail: string } }>;
    };
    expect(body.accepted.map((entry) => entry.docId)).toEqual(['report', 'a-b']);
    expect(body.refused).toEqual([
      {
        file: 'report.txt',
        problem: expect.objectContaining({
          status: 409,
          detail:
            'the file "report.txt" gives the document id "report", which a file before it in this upload has: rename one of them',
        }) as unknown,
      },
      {
        file: 'a-b.md',
        problem: expect.objectContaining({ status: 409 }) as unknown,
      },
      {
        file: '!!!.txt',
        problem: expect.objectContaining({
          status: 422,
          detail: '!!!.txt: "!!!.txt" gives no usable document id (""): name it with a letter or digit',
        }) as unknown,
      },
    ]);
    const stored = await storedCommands(t.bus, t.keys.alice, 2);
    expect(stored.map((command) => command.upsert?.text)).toEqual(['The pump moves water.', 'Spaced.']);
  });

  it('upload - a key without the ingest right is refused before the upload is read', async () => {
    await using t = await startTestGateway();
    const response = await upload(t.baseUrl, t.keys.bob, [['plain.txt', 'text']]);
    expect(response.status).toBe(403);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
  });

  it('ingestion - a key without the ingest right is refused before a JSON or NDJSON body is read: even a malformed one gets 403', async () => {
    await using t = await startTestGateway();
    for (const contentType of ['application/json', 'application/x-ndjson']) {
      const response = await fetch(`${t.baseUrl}/v1/kbs/projects/documents`, {
        method: 'POST',
        headers: { ...bearer(t.keys.bob), 'Content-Type': contentType },
        body: '{not json',
      });
      expect(response.status, contentType).toBe(403);
    }
  });

  it('upload - a form field beside the files is skipped, and a form of more parts than the gateway takes is a 413, not a 500', async () => {
    await using t = await startTestGateway();
    const form = new FormData();
    form.append('note', 'uploaded from the web page');
    form.append('file', new Blob(['Bluefin was founded in 2019.']), 'plain.txt');
    const response = await fetch(`${t.baseUrl}/v1/kbs/projects/documents`, {
      method: 'POST',
      headers: bearer(t.keys.alice),
      body: form,
    });
    expect(response.status).toBe(202);
    expect(((await response.json()) as { accepted: Array<{ docId: string }> }).accepted).toMatchObject([
      { docId: 'plain' },
    ]);

    const crowded = new FormData();
    for (let index = 0; index < 1_001; index++) crowded.append(`field${index}`, 'x');
    const refused = await fetch(`${t.baseUrl}/v1/kbs/projects/documents`, {
      method: 'POST',
      headers: bearer(t.keys.alice),
      body: crowded,
    });
    expect(refused.status).toBe(413);
    expect(((await refused.json()) as { type: string }).type).toBe('urn:hopline:problem:payload-too-large');
  });

  it.each([
    ['a multipart type without a boundary', 'multipart/form-data', 'anything'],
    [
      'a body that ends before its closing boundary',
      'multipart/form-data; boundary=X',
      '--X\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhello',
    ],
    ['a body with no boundary line at all', 'multipart/form-data; boundary=X', 'garbage garbage'],
  ])('upload - %s is the client’s problem (400), not a 500', async (_what, contentType, body) => {
    await using t = await startTestGateway();
    const response = await fetch(`${t.baseUrl}/v1/kbs/projects/documents`, {
      method: 'POST',
      headers: { ...bearer(t.keys.alice), 'Content-Type': contentType },
      body,
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(await response.json()).toMatchObject({ detail: expect.stringContaining('multipart') as unknown });
  });
});
