import type { Client, estypes } from '@elastic/elasticsearch';
import { errors } from '@elastic/elasticsearch';
import type { Bm25Parameters } from '../../lexical/bm25-index.js';
import { elasticsearchError } from './errors.js';

/** Where the adapter reports its start-up choices; the service passes its JSON logger. */
export interface ElasticsearchSetupLog {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
}

/** `smartcn` segments Chinese into words; `standard` splits it into single characters. */
export type TextAnalyzer = 'smartcn' | 'standard';

/** The BM25 similarity every searched field uses, so that k1 and b are the configured ones. */
export const SIMILARITY = 'hopline_bm25';

const ANALYZER_PROBE = '第十二条规定';

/**
 * Asks the cluster to run the smartcn analyzer: it answers when the analysis-smartcn plugin is
 * installed (the compose image has it) and refuses with 400 when not, and then the standard
 * analyzer, which every cluster has, is the fallback.
 */
export async function detectAnalyzer(client: Client, log: ElasticsearchSetupLog): Promise<TextAnalyzer> {
  try {
    await client.indices.analyze({ analyzer: 'smartcn', text: ANALYZER_PROBE });
    log.info('elasticsearch: smartcn analyzer available; Chinese text is segmented into words', {
      analyzer: 'smartcn',
    });
    return 'smartcn';
  } catch (error) {
    if (error instanceof errors.ResponseError && error.statusCode === 400) {
      log.warn(
        'elasticsearch: smartcn analyzer missing (install analysis-smartcn); falling back to the standard analyzer',
        {
          analyzer: 'standard',
        },
      );
      return 'standard';
    }
    throw elasticsearchError(error, 'detecting the Chinese analyzer');
  }
}

/** The chunks index: scope fields as keywords, title and body analysed and scored by BM25(k1, b). */
export function chunkIndexDefinition(
  analyzer: TextAnalyzer,
  bm25: Bm25Parameters,
): { settings: estypes.IndicesIndexSettings; mappings: estypes.MappingTypeMapping } {
  const searched = { type: 'text', analyzer, similarity: SIMILARITY } as const;
  return {
    settings: { index: { similarity: { [SIMILARITY]: { type: 'BM25', k1: bm25.k1, b: bm25.b } } } },
    mappings: {
      dynamic: 'strict',
      properties: {
        chunk_id: { type: 'keyword' },
        tenant_id: { type: 'keyword' },
        kb_id: { type: 'keyword' },
        doc_id: { type: 'keyword' },
        // Versions are Unix milliseconds when the ingest API assigns them: past 2^31.
        doc_version: { type: 'long' },
        title: searched,
        body: searched,
        // Returned with a hit, never searched.
        text: { type: 'text', index: false },
        span_start: { type: 'integer', index: false },
        span_end: { type: 'integer', index: false },
        dedupe_key: { type: 'keyword', index: false },
        effective_date: { type: 'keyword', index: false },
        source_uri: { type: 'keyword', index: false },
        ...ENTITY_GRAPH_CHUNK_FIELDS,
        ...WHOLE_TERMS_FIELDS,
      },
    },
  };
}

/**
 * The whole date and numbered-article terms of a chunk ("10月16日", "2023年10月", "第12条"),
 * which either analyzer splits into numbers and single characters that weigh nothing: written by
 * Hopline's tokenizer, space-separated, and scored by the same BM25, as the embedded index does.
 */
export const WHOLE_TERMS_FIELDS = {
  whole_terms: { type: 'text', analyzer: 'whitespace', similarity: SIMILARITY },
} as const;

/**
 * The fields the entity graph reads back (added to an index created before them; see
 * `ensureFields`): a chunk's entity keys, and when a document's record was last written (the
 * writer's clock, Unix milliseconds), which a worker polls for the writes others applied.
 */
export const ENTITY_GRAPH_CHUNK_FIELDS = { entities: { type: 'keyword' } } as const;
export const ENTITY_GRAPH_RECORD_FIELDS = { changed_at: { type: 'long' } } as const;

/** One record per document: its newest version, whether that is a delete, and its chunk count. */
export function documentIndexDefinition(): { mappings: estypes.MappingTypeMapping } {
  return {
    mappings: {
      dynamic: 'strict',
      properties: {
        tenant_id: { type: 'keyword' },
        kb_id: { type: 'keyword' },
        doc_id: { type: 'keyword' },
        doc_version: { type: 'long' },
        deleted: { type: 'boolean' },
        chunks: { type: 'integer' },
        ...ENTITY_GRAPH_RECORD_FIELDS,
      },
    },
  };
}

/**
 * Adds fields to an index created before them (the mappings are strict, so a write carrying them
 * would be refused); a field the mapping already has is left as it is.
 */
export async function ensureFields(
  client: Client,
  index: string,
  properties: Record<string, estypes.MappingProperty>,
): Promise<void> {
  try {
    await client.indices.putMapping({ index, properties });
  } catch (error) {
    throw elasticsearchError(error, `adding fields ${Object.keys(properties).join(', ')} to index ${index}`);
  }
}

/** Creates the index unless it exists; two workers starting at once both succeed. */
export async function ensureIndex(
  client: Client,
  index: string,
  definition: { settings?: estypes.IndicesIndexSettings; mappings: estypes.MappingTypeMapping },
  log: ElasticsearchSetupLog,
): Promise<'created' | 'exists'> {
  try {
    if (await client.indices.exists({ index })) return 'exists';
    await client.indices.create({ index, ...definition });
    log.info('elasticsearch: index created', { index });
    return 'created';
  } catch (error) {
    if (
      error instanceof errors.ResponseError &&
      error.statusCode === 400 &&
      error.message.includes('resource_already_exists_exception')
    ) {
      return 'exists';
    }
    throw elasticsearchError(error, `creating index ${index}`);
  }
}

/**
 * An index keeps the analyzer and similarity it was created with; when the configuration has
 * changed since, say so, since only a reindex applies the new one. So with an index older than
 * the whole terms: its chunks have none until their documents are written again.
 */
export async function warnOnDrift(
  client: Client,
  index: string,
  analyzer: TextAnalyzer,
  bm25: Bm25Parameters,
  log: ElasticsearchSetupLog,
): Promise<void> {
  let description: estypes.IndicesIndexState | undefined;
  try {
    description = Object.values(await client.indices.get({ index }))[0];
  } catch (error) {
    throw elasticsearchError(error, `reading index ${index}`);
  }
  const properties = description?.mappings?.properties ?? {};
  const body = properties.body as { analyzer?: string } | undefined;
  const similarity = description?.settings?.index?.similarity?.[SIMILARITY] as
    { k1?: unknown; b?: unknown } | undefined;
  const actual = { analyzer: body?.analyzer, k1: Number(similarity?.k1), b: Number(similarity?.b) };
  if (Object.keys(WHOLE_TERMS_FIELDS).some((field) => !(field in properties))) {
    // The field is added now (ensureFields); the chunks already written lack it.
    log.warn(
      'elasticsearch: index predates the whole date and article terms; ingest its documents again for a date in a question to find them',
      { index },
    );
  }
  if (actual.analyzer !== analyzer || actual.k1 !== bm25.k1 || actual.b !== bm25.b) {
    log.warn('elasticsearch: index was created with other analysis settings; reindex to apply the configured ones', {
      index,
      inIndex: actual,
      configured: { analyzer, k1: bm25.k1, b: bm25.b },
    });
  }
}
