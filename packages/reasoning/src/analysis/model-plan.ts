import type { Route__Output } from '@hopline/contracts';
import type { ChatModel, UsageMeter } from '@hopline/models';
import { prompts } from '../prompts.js';
import { z } from 'zod';

const MAX_SUB_QUESTIONS = 6;
// Room for a plan of MAX_SUB_QUESTIONS as JSON; a reply that rambles past it is cut, not paid for.
const PLAN_TOKEN_CAP = 600;

/**
 * The plan a model must return: sub-questions with unique ids whose dependencies name earlier
 * ids only (so the plan has no cycles), and a route that fits them. A reply that breaks any of
 * this is malformed and gets the chat adapter's one repair attempt.
 */
export const modelPlanSchema = z
  .object({
    route: z.enum(['SINGLE', 'PARALLEL', 'ITERATIVE']),
    complexity: z.number().int().min(1).max(5),
    subQuestions: z
      .array(
        z.object({
          id: z.string().regex(/^q\d+$/),
          text: z.string().trim().min(3),
          dependsOn: z.array(z.string()).default([]),
        }),
      )
      .max(MAX_SUB_QUESTIONS)
      .default([]),
  })
  .superRefine((plan, ctx) => {
    const earlier = new Set<string>();
    plan.subQuestions.forEach((sub, index) => {
      if (earlier.has(sub.id))
        ctx.addIssue({ code: 'custom', path: ['subQuestions', index, 'id'], message: `id ${sub.id} is used twice` });
      // "#q1" is filled in with q1's answer, which only a sub-question depending on q1 waits for.
      for (const [, id] of sub.text.matchAll(/#(q?\d+)/g)) {
        const named = id?.startsWith('q') ? id : `q${id}`;
        if (!sub.dependsOn.includes(named)) {
          ctx.addIssue({
            code: 'custom',
            path: ['subQuestions', index, 'dependsOn'],
            message: `the text uses #${id} but does not depend on ${named}`,
          });
        }
      }
      for (const dependency of sub.dependsOn) {
        if (!earlier.has(dependency)) {
          ctx.addIssue({
            code: 'custom',
            path: ['subQuestions', index, 'dependsOn'],
            message: `${dependency} is not an earlier sub-question`,
          });
        }
      }
      earlier.add(sub.id);
    });
    if (plan.route === 'PARALLEL' && plan.subQuestions.length < 2) {
      ctx.addIssue({
        code: 'custom',
        path: ['subQuestions'],
        message: 'a PARALLEL plan needs at least two sub-questions',
      });
    }
  });

export type ModelPlan = z.infer<typeof modelPlanSchema>;

export interface ModelCall {
  deadlineUnixMs: number;
  signal?: AbortSignal;
  /** Where the analysis's model requests are counted. */
  meter: UsageMeter;
}

export async function planWithModel(
  chat: ChatModel,
  question: string,
  rules: { route: Route__Output; signals: readonly string[] },
  call: ModelCall,
): Promise<ModelPlan> {
  const reply = await chat.complete({
    messages: prompts.messages('decompose', { question, route: rules.route, signals: rules.signals.join(', ') }),
    json: modelPlanSchema,
    temperature: 0,
    maxTokens: PLAN_TOKEN_CAP,
    deadlineUnixMs: call.deadlineUnixMs,
    ...(call.signal ? { signal: call.signal } : {}),
    meter: call.meter,
  });
  return reply.value;
}

/** A hypothetical answer passage for the vector path; '' when the model wrote nothing usable. */
export async function writeHypotheticalAnswer(chat: ChatModel, question: string, call: ModelCall): Promise<string> {
  const reply = await chat.complete({
    messages: prompts.messages('hyde', { question }),
    temperature: 0,
    maxTokens: 160,
    deadlineUnixMs: call.deadlineUnixMs,
    ...(call.signal ? { signal: call.signal } : {}),
    meter: call.meter,
  });
  return reply.value.trim();
}
