import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseJsonReply } from '../src/index.js';

const hopShape = z.object({ answer: z.string(), cited: z.array(z.string()) });

describe('a JSON reply read out of what the model wrote', () => {
  it('json reply - prose that mentions a label in brackets before the object still yields the object', () => {
    const reply = 'According to [E1], the star is Mirela Dunstan:\n{"answer": "Mirela Dunstan", "cited": ["E1"]}';
    expect(parseJsonReply(reply, hopShape)).toEqual({ ok: true, value: { answer: 'Mirela Dunstan', cited: ['E1'] } });
  });

  it('json reply - prose with a brace after the object still yields the object', () => {
    const reply = '{"answer": "Paris", "cited": ["E2"]}\nNote: I cited {E2} because it names the city.';
    expect(parseJsonReply(reply, hopShape)).toEqual({ ok: true, value: { answer: 'Paris', cited: ['E2'] } });
  });

  it('json reply - brackets and quotes inside the strings of the object do not end it early', () => {
    const reply = 'Here: {"answer": "The \\"Blue} Room\\" [annex]", "cited": ["E1"]} done.';
    expect(parseJsonReply(reply, hopShape)).toEqual({
      ok: true,
      value: { answer: 'The "Blue} Room" [annex]', cited: ['E1'] },
    });
  });

  it('json reply - a fenced block is read before the prose around it', () => {
    const reply = 'See [1].\n```json\n{"answer": "Oslo", "cited": []}\n```\n{"answer": "not this"}';
    expect(parseJsonReply(reply, hopShape)).toEqual({ ok: true, value: { answer: 'Oslo', cited: [] } });
  });

  it('json reply - says why: no JSON, JSON that does not parse, JSON of another shape, JSON cut short', () => {
    expect(parseJsonReply('I think it is Paris.', hopShape)).toEqual({
      ok: false,
      problem: 'the reply contains no JSON object',
    });
    expect(parseJsonReply('{"answer": Paris}', hopShape)).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/^the JSON does not parse/),
    });
    expect(parseJsonReply('See [E1]: {"town": "Paris"}', hopShape)).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/^the JSON does not match the schema: answer: /),
    });
    expect(parseJsonReply('{"answer": "Par', hopShape)).toEqual({
      ok: false,
      problem: 'the JSON does not close (a reply cut short?)',
    });
  });
});
