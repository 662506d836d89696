import { DecidedBy, Route } from '@hopline/contracts';
import { createOpenAiChatModel } from '@hopline/models';
import { startScriptedOpenAiServer, systemPrompt, type ScriptedOpenAiServer } from '@hopline/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAnalyzer } from '../src/index.js';
import { modelPlanSchema } from '../src/analysis/model-plan.js';

let server: ScriptedOpenAiServer;
beforeEach(async () => {
  server = await startScriptedOpenAiServer();
});
afterEach(async () => {
  await server.close();
});

const soon = () => ({ deadlineUnixMs: Date.now() + 5_000 });
const chat = () => createOpenAiChatModel({ baseURL: server.baseURL, model: 'planner', attempts: 1 });
// Long and without any rule signal: the rules leave it open.
const undecided =
  'Why do some historians think the long economic decline of the late empire began well before its famous military defeats and territorial losses?';
const plan = {
  route: 'ITERATIVE',
  complexity: 3,
  subQuestions: [
    { id: 'q1', text: 'When did the economic decline of the late empire begin?', dependsOn: [] },
    { id: 'q2', text: 'Which historians date the decline before #q1?', dependsOn: ['q1'] },
  ],
};

describe('analyzer - who decides', () => {
  it('analyzer - without a model the rules decide, in microseconds and with no request', async () => {
    const analysis = await createAnalyzer().analyze(
      'Who is the coach of the team that won the 1990 World Cup?',
      soon(),
    );
    expect(analysis).toMatchObject({ route: Route.ITERATIVE, decidedBy: DecidedBy.RULES, hydeText: '' });
  });

  it('analyzer - with a model, a question the rules decide never reaches it', async () => {
    const analysis = await createAnalyzer({ chat: chat() }).analyze(
      'Which film came out first, How To Lose Nothing or Sela Vanu?',
      soon(),
    );
    expect(analysis.decidedBy).toBe(DecidedBy.RULES);
    expect(server.requests).toHaveLength(0);
  });

  it('analyzer - a question the rules leave open is planned by the model at temperature 0, its plan validated', async () => {
    server.enqueue({ content: JSON.stringify(plan) }, { content: 'The decline began in the third century.' });
    const analysis = await createAnalyzer({ chat: chat() }).analyze(undecided, soon());
    expect(analysis).toMatchObject({ route: Route.ITERATIVE, decidedBy: DecidedBy.MODEL, complexity: 3 });
    expect(analysis.subQuestions.map((sub) => sub.dependsOn)).toEqual([[], ['q1']]);
    expect(server.requests[0]?.temperature).toBe(0);
    expect(systemPrompt(server.requests[0]!)).toMatch(/plan/i);
  });

  it('analyzer - a malformed plan gets one repair attempt, and the repaired plan is used', async () => {
    server.enqueue(
      { content: '{"route": "ITERATIVE", "complexity": 3, "subQuestions": [' },
      { content: JSON.stringify(plan) },
      { content: 'A passage.' },
    );
    const analysis = await createAnalyzer({ chat: chat() }).analyze(undecided, soon());
    expect(analysis.decidedBy).toBe(DecidedBy.MODEL);
    expect(server.requests.filter((request) => /plan/i.test(systemPrompt(request)))).toHaveLength(2);
  });

  it("analyzer - a plan whose dependencies form a cycle is malformed: after one repair the rules' answer stands, marked FALLBACK", async () => {
    const cyclic = {
      ...plan,
      subQuestions: [
        { id: 'q1', text: 'first part of it', dependsOn: ['q2'] },
        { id: 'q2', text: 'second part of it', dependsOn: ['q1'] },
      ],
    };
    server.enqueue({ content: JSON.stringify(cyclic) }, { content: JSON.stringify(cyclic) }, { content: 'A passage.' });
    const analysis = await createAnalyzer({ chat: chat() }).analyze(undecided, soon());
    expect(analysis.decidedBy).toBe(DecidedBy.FALLBACK);
    expect(analysis.route).toBe(Route.SINGLE);
    expect(analysis.fallbackReason).toMatch(/malformed/);
  });

  it("analyzer - a model that is down leaves the rules' answer standing, marked FALLBACK with the reason", async () => {
    server.setRule(() => ({ status: 503 }));
    const analysis = await createAnalyzer({ chat: chat() }).analyze(undecided, soon());
    expect(analysis).toMatchObject({ decidedBy: DecidedBy.FALLBACK, route: Route.SINGLE });
    expect(analysis.fallbackReason).toMatch(/unavailable/);
  });

  it('analyzer - a fuzzy question gets a hypothetical answer for the vector path', async () => {
    server.enqueue({ content: 'Plants turn light into chemical energy by photosynthesis in their leaves.' });
    const analysis = await createAnalyzer({ chat: chat() }).analyze('how do plants turn light into food?', soon());
    expect(analysis.hydeText).toMatch(/photosynthesis/);
    expect(analysis.decidedBy).toBe(DecidedBy.RULES);
  });
});

describe('analyzer - a model plan', () => {
  it('analyzer - a sub-question that writes "#q1" without depending on q1 makes the plan malformed, so the model is asked to repair it', () => {
    const plan = {
      route: 'PARALLEL',
      complexity: 2,
      subQuestions: [
        { id: 'q1', text: 'Which team won the 1998 cup?' },
        { id: 'q2', text: 'Who coached #q1 that year?', dependsOn: [] },
      ],
    };
    const parsed = modelPlanSchema.safeParse(plan);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toBe('the text uses #q1 but does not depend on q1');
    const repaired = { ...plan, subQuestions: [plan.subQuestions[0], { ...plan.subQuestions[1], dependsOn: ['q1'] }] };
    expect(modelPlanSchema.safeParse(repaired).success).toBe(true);
  });
});
