import type { Readable } from 'node:stream';
import fastifyMultipart from '@fastify/multipart';
import type { FastifyPluginAsyncZod, ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { DurableStream } from '@hopline/bus';
import { codecs, ingestMessageId, subjects } from '@hopline/contracts';
import type { Logger } from '@hopline/telemetry';
import type { Principal } from '../api-keys.js';
import { docIdSchema } from '../document-id.js';
import type { Drain } from '../drain.js';
import {
  acceptJsonDocuments,
  acceptNdjsonDocuments,
  documentSchema,
  jsonBodySchema,
  NDJSON_TYPES,
  ingestRefusal,
  type IngestTarget,
} from '../ingestion/accept-documents.js';
import { acceptUploadedFiles } from '../ingestion/accept-files.js';
import { versionNow } from '../ingestion/version-clock.js';
import type { KbService } from '../kb-service.js';
import { problems } from '../problem.js';
import { hasOnlyUtf8Charset } from './media-type.js';
import { principalOf, refuseWhileDraining, tracedWith } from './request-context.js';
import {
  acceptedSchema,
  documentParams,
  kbParams,
  kbViewSchema,
  problemResponses,
  workerLagSchema,
} from './schemas.js';

export interface KbRoutesOptions {
  kbs: KbService;
  /** Refuses the routes that write (create, delete, ingest) while the gateway drains; reads go on. */
  drain: Drain;
  ingest: DurableStream;
  /** Where bodies too large for one bus message go ahead of their ingest command. */
  documentBodies: DurableStream;
  logger: Logger;
  /** The largest document: a JSON body, one NDJSON line (INGEST_MAX_DOCUMENT_BYTES). */
  maxDocumentBytes: number;
  /** Called after the gateway itself wrote to a kb, so answers cached before are not served. */
  kbWritten: (tenantId: string, kbId: string) => Promise<void>;
  /** Charges the key's rate for an ingestion request; throws the 429 problem beyond it. */
  chargeIngest: (keyId: string) => Promise<void>;
  /** Whether the document is indexed, and at which version, counting everything accepted before the call. */
  lookupDocument: (tenantId: string, kbId: string, docId: string) => Promise<{ exists: boolean; version: number }>;
}

const INGEST_ACCEPTS =
  'application/json, application/x-ndjson with one document per line, or multipart/form-data with files ' +
  '(PDF, DOCX, HTML, markdown, text)';

/** A file part in the OpenAPI document. */
const uploadSchema = z.object({
  file: z
    .array(z.string().meta({ format: 'binary' }))
    .describe(
      'One part per file; its file name gives the document id and type (.pdf .docx .html .htm .md .markdown .txt)',
    ),
});

/** Knowledge bases as a resource, and the documents in them. */
export const kbRoutes: FastifyPluginAsyncZod<KbRoutesOptions> = async (app, options) => {
  const { kbs } = options;
  const traced = tracedWith(options.logger);

  app.get(
    '/v1/kbs',
    {
      schema: {
        summary: "The key's knowledge bases, with the index lag of each retrieval worker",
        response: {
          200: z.object({ kbs: z.array(kbViewSchema), indexLag: z.array(workerLagSchema) }),
          ...problemResponses,
        },
      },
    },
    (request, reply) => traced(request, reply, async () => reply.send(await kbs.list(principalOf(request)))),
  );

  app.get(
    '/v1/kbs/:kb',
    {
      schema: {
        summary: 'One knowledge base',
        description: '404 when the key names it but it was never created and holds no documents; 403 outside the key.',
        params: kbParams,
        response: { 200: kbViewSchema, ...problemResponses },
      },
    },
    (request, reply) =>
      traced(request, reply, async () => reply.send(await kbs.get(principalOf(request), request.params.kb))),
  );

  app.put(
    '/v1/kbs/:kb',
    {
      onRequest: refuseWhileDraining(options.drain),
      schema: {
        summary: 'Create a knowledge base (keys with the ingest right)',
        params: kbParams,
        response: { 200: kbViewSchema, 201: kbViewSchema, ...problemResponses },
      },
    },
    (request, reply) =>
      traced(request, reply, async () => {
        const { kb, created } = await kbs.create(principalOf(request), request.params.kb);
        return reply.code(created ? 201 : 200).send(kb);
      }),
  );

  app.delete(
    '/v1/kbs/:kb',
    {
      onRequest: refuseWhileDraining(options.drain),
      schema: {
        summary: 'Delete an empty knowledge base (keys with the ingest right)',
        description: '409 while it holds documents; 404 when it does not exist.',
        params: kbParams,
        response: { 200: kbViewSchema, ...problemResponses },
      },
    },
    (request, reply) =>
      traced(request, reply, async () => reply.send(await kbs.delete(principalOf(request), request.params.kb))),
  );

  // Ingestion's own scope: its body limit, and the streamed media types no other route takes.
  await app.register(async (ingestion) => {
    // NDJSON is handed to the route as the request stream, read a line at a time.
    ingestion.addContentTypeParser(NDJSON_TYPES, (request, payload, done) =>
      hasOnlyUtf8Charset(request.headers['content-type'])
        ? done(null, payload)
        : done(problems.unsupportedMediaType(), undefined),
    );
    // Files are streamed part by part; each is held alone, within the document limit.
    await ingestion.register(fastifyMultipart, {
      // Form fields are allowed and skipped (a browser's form may send some); the parts stay capped.
      limits: { fileSize: options.maxDocumentBytes },
      // A file over the limit is reported among the refused ones, not as the request's failure.
      throwFileSizeLimit: false,
    });

    ingestion.withTypeProvider<ZodTypeProvider>().post(
      '/v1/kbs/:kb/documents',
      {
        bodyLimit: options.maxDocumentBytes,
        config: { bodyLimitSetting: 'INGEST_MAX_DOCUMENT_BYTES', accepts: INGEST_ACCEPTS },
        onRequest: refuseWhileDraining(options.drain),
        // Before the body is read: a key that may not ingest here does not get up to
        // INGEST_MAX_DOCUMENT_BYTES read and parsed first.
        preParsing: async (request) => {
          const principal = principalOf(request);
          requireIngestScope(principal, request.params.kb);
          await options.chargeIngest(principal.keyId);
        },
        schema: {
          summary: 'Ingest documents',
          description:
            'One document or `{ documents: [...] }` as JSON, within INGEST_MAX_DOCUMENT_BYTES; or any number as ' +
            'NDJSON, one per line, each within it. A bad line stops the stream; the documents before it stay accepted. ' +
            'Or files as multipart/form-data, parsed by the gateway: a file that cannot be ingested is listed in ' +
            '`refused` with its problem, and the others go in.',
          params: kbParams,
          documentedBody: {
            'application/json': jsonBodySchema,
            'application/x-ndjson': documentSchema,
            'multipart/form-data': uploadSchema,
          },
          response: { 202: acceptedSchema, ...problemResponses },
        },
      },
      (request, reply) =>
        traced(request, reply, async () => {
          const principal = principalOf(request);
          const { kb } = request.params;
          const target: IngestTarget = {
            streams: { ingest: options.ingest, bodies: options.documentBodies },
            tenantId: principal.tenantId,
            kbId: kb,
          };
          try {
            if (request.isMultipart()) {
              const files = await acceptUploadedFiles(target, request.parts(), options.maxDocumentBytes);
              return reply.code(202).send({ kbId: kb, ...files });
            }
            const accepted = NDJSON_TYPES.test(request.headers['content-type'] ?? '')
              ? await acceptNdjsonDocuments(target, request.body as Readable, options.maxDocumentBytes)
              : await acceptJsonDocuments(target, request.body);
            return reply.code(202).send({ kbId: kb, accepted });
          } finally {
            // Documents accepted before a bad line stay accepted: answers cached before them are stale.
            await options.kbWritten(principal.tenantId, kb);
          }
        }),
    );
  });

  app.delete(
    '/v1/kbs/:kb/documents/:doc',
    {
      onRequest: refuseWhileDraining(options.drain),
      schema: {
        summary: 'Delete a document',
        params: documentParams,
        response: {
          202: z.object({ kbId: z.string(), docId: z.string(), deleted: z.literal(true), version: z.number().int() }),
          ...problemResponses,
        },
      },
    },
    (request, reply) =>
      traced(request, reply, async () => {
        const principal = principalOf(request);
        const { kb, doc } = request.params;
        requireIngestScope(principal, kb);
        await options.chargeIngest(principal.keyId);
        const valid = docIdSchema.safeParse(doc);
        if (!valid.success) throw problems.invalidRequest(valid.error.issues.map((issue) => issue.message).join('; '));
        const current = await options.lookupDocument(principal.tenantId, kb, doc);
        if (!current.exists) throw problems.notFound(`no document "${doc}" in kb "${kb}"`);
        // Never below the version indexed: a gateway whose clock runs behind still deletes it.
        const version = Math.max(versionNow(principal.tenantId, kb, doc), current.version);
        await options.ingest
          .publish(
            subjects.ingest(principal.tenantId, kb),
            codecs.ingestCommand.encode({ delete: { tenantId: principal.tenantId, kbId: kb, docId: doc, version } }),
            { msgId: ingestMessageId('delete', principal.tenantId, kb, doc, version) },
          )
          .catch((error: unknown) => {
            throw ingestRefusal(error);
          });
        await options.kbWritten(principal.tenantId, kb);
        return reply.code(202).send({ kbId: kb, docId: doc, deleted: true as const, version });
      }),
  );
};

function requireIngestScope(principal: Principal, kbId: string): void {
  if (!principal.canIngest) throw problems.forbidden('this key may not ingest documents');
  if (!principal.kbIds.includes(kbId)) throw problems.forbidden(`this key may not write to "${kbId}"`);
}
