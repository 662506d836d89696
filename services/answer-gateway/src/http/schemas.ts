import { z } from 'zod';

/**
 * What the API's routes take and give, as the schemas that validate them and the OpenAPI
 * document is generated from. Responses are open objects: they name the fields clients rely
 * on and let the rest through as the contracts define it.
 */

export const problemSchema = z
  .looseObject({
    type: z.string().describe('urn:hopline:problem:<slug>: branch on this, never on `detail`'),
    title: z.string(),
    status: z.number().int(),
    detail: z.string().optional(),
  })
  .describe('An RFC 9457 problem document (application/problem+json)');

/** Every route may answer with a problem; its `type` says which. */
const problemResponse = {
  description: 'A problem document',
  content: { 'application/problem+json': { schema: problemSchema } },
};
export const problemResponses = { '4xx': problemResponse, '5xx': problemResponse } as const;

export const questionIdParams = z.object({ id: z.string().describe('The question id (Hopline-Question-Id)') });
export const kbParams = z.object({ kb: z.string().describe('A knowledge base id within the key’s kbs') });
export const documentParams = kbParams.extend({ doc: z.string().describe('A document id') });

export const doneSchema = z
  .looseObject({
    questionId: z.string(),
    answer: z.string().optional(),
    citations: z.array(z.looseObject({})).optional(),
    stopReason: z.string().optional(),
  })
  .describe('The `done` event of the question: its answer, citations and why it stopped');

export const eventStreamSchema = z
  .string()
  .describe('Server-Sent Events, one per QaEvent (`id:` is its seq, a resume point), schema hopline.v1.QaEvent');

export const kbViewSchema = z.object({
  kbId: z.string(),
  documents: z.number().int(),
  chunks: z.number().int(),
  createdUnixMs: z.number().int(),
});

export const acceptedSchema = z.object({
  kbId: z.string(),
  accepted: z.array(z.object({ docId: z.string(), version: z.number().int(), duplicate: z.boolean() })),
  refused: z
    .array(z.object({ file: z.string(), problem: problemSchema }))
    .optional()
    .describe('Uploaded files that were not ingested, each with its problem (multipart uploads only)'),
});

export const workerLagSchema = z.object({
  workerId: z.string(),
  ingestLag: z.number().int().describe('Ingest commands stored that the worker has not applied yet'),
});
