import { describe, expect, it } from 'vitest';
import { createLogger, type LoggerOptions } from '../src/index.js';

/** The shape of a taxonomy error (a string `code`), without depending on the contracts package. */
class ValidationError extends Error {
  readonly code = 'invalid_argument';
  override name = 'ValidationError';
}

function capture(options: LoggerOptions = {}) {
  const lines: string[] = [];
  const logger = createLogger('reranker', { ...options, destination: { write: (line) => lines.push(line) } });
  const records = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  return { logger, lines, records };
}

describe('logger', () => {
  it('logger - writes one JSON object per line with time, level, service, msg and fields', () => {
    const { logger, lines, records } = capture();
    logger.info('reranked', { kept: 8, scorer: 'lexical' });
    expect(lines).toHaveLength(1);
    expect(lines[0]?.endsWith('\n')).toBe(true);
    const [record] = records();
    expect(record).toMatchObject({ level: 'info', service: 'reranker', msg: 'reranked', kept: 8, scorer: 'lexical' });
    expect(new Date(String(record?.time)).toISOString()).toBe(record?.time);
  });

  it('logger - drops lines below the configured level and writes nothing when silent', () => {
    const warnOnly = capture({ level: 'warn' });
    warnOnly.logger.debug('noise');
    warnOnly.logger.info('noise');
    warnOnly.logger.warn('slow backend');
    warnOnly.logger.error('backend down');
    expect(warnOnly.records().map((record) => record.level)).toEqual(['warn', 'error']);
    expect(warnOnly.logger.isLevelEnabled('info')).toBe(false);
    expect(warnOnly.logger.isLevelEnabled('error')).toBe(true);

    const silent = capture({ level: 'silent' });
    silent.logger.error('unseen');
    expect(silent.lines).toHaveLength(0);
  });

  it('logger - a child binds fields to every line and inherits level and destination', () => {
    const { logger, records } = capture({ level: 'warn' });
    const child = logger.child({ question_id: 'q1' }).child({ hop: 2 });
    child.info('dropped by the inherited level');
    child.warn('hop slow', { ms: 900 });
    expect(records()).toEqual([expect.objectContaining({ msg: 'hop slow', question_id: 'q1', hop: 2, ms: 900 })]);
  });

  it('logger - a taxonomy error is serialised with name, code and message and its cause', () => {
    const { logger, records } = capture();
    logger.warn('rejected', { error: new ValidationError('question is empty', { cause: new TypeError('bad input') }) });
    const [record] = records();
    expect(record?.error).toMatchObject({
      name: 'ValidationError',
      code: 'invalid_argument',
      message: 'question is empty',
      cause: { name: 'TypeError', message: 'bad input' },
    });
    expect(record?.error).not.toHaveProperty('stack');
  });

  it('logger - an unexpected error keeps its stack', () => {
    const { logger, records } = capture();
    logger.error('handler crashed', { error: new RangeError('index out of range') });
    const error = records()[0]?.error as Record<string, unknown>;
    expect(error.name).toBe('RangeError');
    expect(String(error.stack)).toContain('index out of range');
  });

  it("logger - fields cannot overwrite the line's own keys", () => {
    const { logger, records } = capture();
    logger.info('real message', { msg: 'forged', level: 'error', service: 'other', note: 'kept' });
    expect(records()[0]).toMatchObject({ msg: 'real message', level: 'info', service: 'reranker', note: 'kept' });
  });

  it('logger - circular fields and bigints do not cost the line', () => {
    const { logger, records } = capture();
    const node: Record<string, unknown> = { name: 'a' };
    node.self = node;
    logger.info('odd fields', { node, big: 10n });
    expect(records()[0]).toMatchObject({ msg: 'odd fields', node: { name: 'a', self: '[Circular]' }, big: '10' });
  });

  it('logger - a field whose toJSON throws costs that field only, not the line', () => {
    const { logger, records } = capture();
    logger.info('still here', {
      kept: 1,
      broken: {
        toJSON: () => {
          throw new Error('cannot serialise');
        },
      },
    });
    const [record] = records();
    expect(record).toMatchObject({ msg: 'still here', kept: 1 });
    expect(String(record?.broken)).toMatch(/unable to serialize/);
  });

  it('logger - a repeated reference that is not a cycle is logged twice, not cut', () => {
    const { logger, records } = capture();
    const shared = { id: 7 };
    logger.info('twice', { first: shared, second: shared });
    expect(records()[0]).toMatchObject({ first: { id: 7 }, second: { id: 7 } });
  });
});
