import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';

/**
 * A Milvus server in the test process: the MilvusService from the proto descriptors the SDK
 * ships (`dist/milvus/proto-json`), served by grpc-js on a random loopback port, with an
 * in-memory store behind the RPCs the adapter uses. It records every request as decoded off
 * the wire, so tests assert what the adapter sent; it understands only template filters
 * (`field op {name}` joined by `&&`), so an expression with a value spliced into its text is
 * refused as Milvus would refuse a syntax error.
 */

// Same decoding as the SDK's own client (GRPCClient LOADER_OPTIONS).
const LOADER_OPTIONS = { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true } as const;

const require = createRequire(import.meta.url);
const protoJson = (
  require(join(dirname(require.resolve('@zilliz/milvus2-sdk-node')), 'proto-json', 'milvus.js')) as {
    default: protobuf.INamespace;
  }
).default;
const protoRoot = protobuf.Root.fromJSON(protoJson);
const CollectionSchema = protoRoot.lookupType('milvus.proto.schema.CollectionSchema');
const PlaceholderGroup = protoRoot.lookupType('milvus.proto.common.PlaceholderGroup');

type Json = Record<string, unknown>;
export type Row = Record<string, unknown>;

export interface Call {
  method: string;
  request: Json;
}

export interface FakeField {
  name: string;
  data_type: string;
  is_primary_key: boolean;
  is_partition_key: boolean;
  type_params: Array<{ key: string; value: string }>;
}

export interface FakeCollection {
  name: string;
  schema: Json & { fields: FakeField[] };
  consistency_level: string;
  rows: Map<string, Row>;
  index?: { field_name: string; params: Record<string, string> };
  loadPolls: number;
}

/** Injected per RPC: a gRPC failure, a Milvus error status, or no answer at all. */
export type Fault = { grpc: grpc.status; details?: string } | { status: Json } | 'hang';

const OK = { error_code: 'Success', code: 0, reason: '' };

export interface FakeMilvus {
  address: string;
  calls: Call[];
  collections: Map<string, FakeCollection>;
  /** RPCs the adapter called that the fake does not implement. */
  unexpected: string[];
  /** Polls of GetLoadState that answer "loading" before a collection reports loaded. */
  loadingPolls: number;
  fail(method: string, fault: Fault): void;
  /** Runs `hook` once, on the next call of `method`, before the fake handles it (a concurrent writer's move). */
  beforeNext(method: string, hook: (request: Json) => void): void;
  heal(method: string): void;
  /**
   * Refuses, whole, every upsert to `collection` holding a row that `refuse` picks, with a
   * parameter error (1100): how Milvus answers a request with one invalid row in it.
   */
  refuseRows(collection: string, refuse: (row: Row) => boolean): void;
  callsOf(method: string): Json[];
  close(): Promise<void>;
}

export async function startFakeMilvus(): Promise<FakeMilvus> {
  const definition = protoLoader.fromJSON(protoJson, LOADER_OPTIONS);
  const service = (
    grpc.loadPackageDefinition(definition) as unknown as {
      milvus: { proto: { milvus: { MilvusService: grpc.ServiceClientConstructor } } };
    }
  ).milvus.proto.milvus.MilvusService.service;
  const calls: Call[] = [];
  const unexpected: string[] = [];
  const collections = new Map<string, FakeCollection>();
  const faults = new Map<string, Fault>();
  const hanging: Array<() => void> = [];
  const hooks = new Map<string, (request: Json) => void>();
  const refusals = new Map<string, (row: Row) => boolean>();

  const handlers: Record<string, (request: Json) => Json> = {
    Connect: () => ({ status: OK, identifier: '42', server_info: { build_tags: 'fake-milvus' } }),
    DescribeCollection(request) {
      const collection = collections.get(String(request.collection_name));
      if (!collection)
        return {
          status: {
            error_code: 'UnexpectedError',
            code: 100,
            reason: `collection not found[collection=${String(request.collection_name)}]`,
          },
        };
      return {
        status: OK,
        schema: collection.schema,
        collection_name: collection.name,
        collectionID: '1',
        consistency_level: collection.consistency_level,
        num_partitions: '16',
        created_timestamp: '1',
        update_timestamp: '1',
      };
    },
    CreateCollection(request) {
      const name = String(request.collection_name);
      if (collections.has(name))
        return { error_code: 'UnexpectedError', code: 65535, reason: `collection ${name} already exists` };
      const schema = CollectionSchema.toObject(
        CollectionSchema.decode(request.schema as Uint8Array),
        LOADER_OPTIONS,
      ) as FakeCollection['schema'];
      schema.fields.forEach((field, i) => Object.assign(field, { fieldID: String(100 + i) }));
      collections.set(name, {
        name,
        schema,
        consistency_level: String(request.consistency_level),
        rows: new Map(),
        loadPolls: 0,
      });
      return OK;
    },
    CreateIndex(request) {
      const collection = collections.get(String(request.collection_name));
      if (!collection) return { error_code: 'UnexpectedError', code: 100, reason: 'collection not found' };
      const params = Object.fromEntries(
        (request.extra_params as Array<{ key: string; value: string }>).map(({ key, value }) => [key, value]),
      );
      if (collection.index && JSON.stringify(collection.index.params) !== JSON.stringify(params)) {
        return {
          error_code: 'UnexpectedError',
          code: 65535,
          reason: 'CreateIndex failed: at most one distinct index is allowed per field',
        };
      }
      collection.index = { field_name: String(request.field_name), params };
      return OK;
    },
    LoadCollection: (request) =>
      collections.has(String(request.collection_name))
        ? OK
        : { error_code: 'UnexpectedError', code: 100, reason: 'collection not found' },
    GetLoadState(request) {
      const collection = collections.get(String(request.collection_name));
      if (!collection)
        return {
          status: { error_code: 'UnexpectedError', code: 100, reason: 'collection not found' },
          state: 'LoadStateNotExist',
        };
      collection.loadPolls += 1;
      return { status: OK, state: collection.loadPolls > fake.loadingPolls ? 'LoadStateLoaded' : 'LoadStateLoading' };
    },
    Upsert(request) {
      const collection = required(request);
      const rows = rowsFromFieldData(request.fields_data as Json[], Number(request.num_rows));
      const refuse = refusals.get(collection.name);
      const refused = refuse && rows.find(refuse);
      if (refused)
        throw new MilvusStatusError({
          error_code: 'UnexpectedError',
          code: 1100,
          reason: `invalid row ${String(refused.pk)}`,
        });
      const pkField = collection.schema.fields.find((f) => f.is_primary_key)?.name ?? 'pk';
      for (const row of rows) collection.rows.set(String(row[pkField]), row);
      return {
        status: OK,
        IDs: { str_id: { data: rows.map((row) => row[pkField]) } },
        upsert_cnt: String(rows.length),
        succ_index: rows.map((_, i) => i),
      };
    },
    Delete(request) {
      const collection = required(request);
      const matches = matcher(String(request.expr), request.expr_template_values as Json);
      let deleted = 0;
      for (const [pk, row] of collection.rows) {
        if (matches(row)) {
          collection.rows.delete(pk);
          deleted += 1;
        }
      }
      return { status: OK, delete_cnt: String(deleted) };
    },
    Query(request) {
      const collection = required(request);
      const matches = matcher(String(request.expr), request.expr_template_values as Json);
      const params = Object.fromEntries(
        (request.query_params as Array<{ key: string; value: string }>).map(({ key, value }) => [key, value]),
      );
      const outputs = request.output_fields as string[];
      const found = [...collection.rows.values()]
        .filter(matches)
        .sort((a, b) => (String(a.pk) < String(b.pk) ? -1 : 1)); // primary-key (byte) order, as Milvus pages
      if (outputs.length === 1 && outputs[0] === 'count(*)') {
        return {
          status: OK,
          fields_data: [
            { type: 'Int64', field_name: 'count(*)', scalars: { long_data: { data: [String(found.length)] } } },
          ],
          output_fields: outputs,
        };
      }
      const limited = params.limit ? found.slice(0, Number(params.limit)) : found;
      return {
        status: OK,
        fields_data: outputs.map((name) => fieldData(collection, name, limited)),
        output_fields: outputs,
        collection_name: collection.name,
      };
    },
    Search(request) {
      const collection = required(request);
      const params = Object.fromEntries(
        (request.search_params as Array<{ key: string; value: string }>).map(({ key, value }) => [key, value]),
      );
      const annsField = params.anns_field ?? 'vector';
      const query = queryVector(request.placeholder_group as Uint8Array);
      const matches = matcher(String(request.dsl), request.expr_template_values as Json);
      const hits = [...collection.rows.values()]
        .filter(matches)
        .map((row) => ({ row, score: cosine(query, row[annsField] as number[]) }))
        .sort((a, b) => b.score - a.score)
        .slice(0, Number(params.topk));
      const outputs = request.output_fields as string[];
      const rows = hits.map((hit) => hit.row);
      return {
        status: OK,
        collection_name: collection.name,
        results: {
          num_queries: '1',
          top_k: params.topk,
          fields_data: outputs.map((name) => fieldData(collection, name, rows)),
          scores: hits.map((hit) => hit.score),
          ids: { str_id: { data: rows.map((row) => row.pk) } },
          topks: [String(hits.length)],
          output_fields: outputs,
          primary_field_name: 'pk',
        },
      };
    },
  };

  function required(request: Json): FakeCollection {
    const collection = collections.get(String(request.collection_name));
    if (!collection)
      throw new MilvusStatusError({
        error_code: 'UnexpectedError',
        code: 100,
        reason: `collection not found[collection=${String(request.collection_name)}]`,
      });
    return collection;
  }

  const implementation: grpc.UntypedServiceImplementation = {};
  for (const [name, method] of Object.entries(service)) {
    const returnsStatus =
      method.path.endsWith('/CreateCollection') ||
      method.path.endsWith('/CreateIndex') ||
      method.path.endsWith('/LoadCollection');
    implementation[name] = (call: grpc.ServerUnaryCall<Json, Json>, callback: grpc.sendUnaryData<Json>) => {
      calls.push({ method: name, request: call.request });
      const hook = hooks.get(name);
      hooks.delete(name);
      hook?.(call.request);
      const fault = faults.get(name);
      if (fault === 'hang')
        return void hanging.push(() => callback({ code: grpc.status.UNAVAILABLE, details: 'fake milvus closed' }));
      if (fault && 'grpc' in fault)
        return callback({ code: fault.grpc, details: fault.details ?? `fake ${name} failure` });
      if (fault) return callback(null, returnsStatus ? fault.status : { status: fault.status });
      const handler = handlers[name];
      if (!handler) {
        unexpected.push(name);
        return callback({ code: grpc.status.INTERNAL, details: `fake milvus does not implement ${name}` });
      }
      try {
        callback(null, handler(call.request));
      } catch (error) {
        if (error instanceof MilvusStatusError)
          return callback(null, returnsStatus ? error.status : { status: error.status });
        callback({ code: grpc.status.INTERNAL, details: (error as Error).message });
      }
    };
  }

  const server = new grpc.Server();
  server.addService(service, implementation);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );

  const fake: FakeMilvus = {
    address: `127.0.0.1:${port}`,
    calls,
    collections,
    unexpected,
    loadingPolls: 0,
    fail: (method, fault) => void faults.set(method, fault),
    heal: (method) => void faults.delete(method),
    refuseRows: (collection, refuse) => void refusals.set(collection, refuse),
    beforeNext: (method, hook) => void hooks.set(method, hook),
    callsOf: (method) => calls.filter((c) => c.method === method).map((c) => c.request),
    async close() {
      for (const release of hanging.splice(0)) release();
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
    },
  };
  return fake;
}

class MilvusStatusError extends Error {
  constructor(readonly status: Json) {
    super(String(status.reason));
  }
}

/** Column-wise FieldData (as the SDK sends it) back to rows. */
function rowsFromFieldData(fields: Json[], count: number): Row[] {
  const rows: Row[] = Array.from({ length: count }, () => ({}));
  for (const field of fields) {
    const name = String(field.field_name);
    const values = columnValues(field, count);
    values.forEach((value, i) => void ((rows[i] as Row)[name] = value));
  }
  return rows;
}

function columnValues(field: Json, count: number): unknown[] {
  const vectors = field.vectors as { dim: string; float_vector?: { data: number[] } } | null;
  if (vectors?.float_vector) {
    const dim = Number(vectors.dim);
    return Array.from({ length: count }, (_, i) => vectors.float_vector?.data.slice(i * dim, (i + 1) * dim));
  }
  const scalars = field.scalars as Record<string, { data: unknown[] } | null>;
  switch (field.type) {
    case 'VarChar':
      return scalars.string_data?.data ?? [];
    case 'Int64':
      return (scalars.long_data?.data ?? []).map(Number);
    case 'Bool':
      return scalars.bool_data?.data ?? [];
    case 'JSON':
      return (scalars.json_data?.data ?? []).map(
        (bytes) => JSON.parse(Buffer.from(bytes as Uint8Array).toString('utf8')) as unknown,
      );
    default:
      throw new Error(`fake milvus cannot store ${String(field.type)} field ${String(field.field_name)}`);
  }
}

/** Rows to the column-wise FieldData of one output field. */
function fieldData(collection: FakeCollection, name: string, rows: readonly Row[]): Json {
  const field = collection.schema.fields.find((f) => f.name === name);
  if (!field)
    throw new MilvusStatusError({ error_code: 'UnexpectedError', code: 1100, reason: `field ${name} not exist` });
  const values = rows.map((row) => row[name]);
  switch (field.data_type) {
    case 'VarChar':
      return { type: 'VarChar', field_name: name, scalars: { string_data: { data: values } } };
    case 'Int64':
      return { type: 'Int64', field_name: name, scalars: { long_data: { data: values.map(String) } } };
    case 'Bool':
      return { type: 'Bool', field_name: name, scalars: { bool_data: { data: values } } };
    case 'JSON':
      return {
        type: 'JSON',
        field_name: name,
        scalars: { json_data: { data: values.map((value) => Buffer.from(JSON.stringify(value))) } },
      };
    default:
      throw new MilvusStatusError({
        error_code: 'UnexpectedError',
        code: 1100,
        reason: `fake milvus cannot return ${field.data_type} field ${name}`,
      });
  }
}

const CLAUSE = /^\s*(\w+)\s*(==|!=|<=|>=|<|>|in)\s*(?:\{(\w+)\}|(true|false))\s*$/;

/** A predicate for a template filter; anything else is refused like a Milvus parse error. */
function matcher(expression: string, templates: Json): (row: Row) => boolean {
  const clauses = expression.split('&&').map((text) => {
    const match = CLAUSE.exec(text);
    if (!match)
      throw new MilvusStatusError({
        error_code: 'UnexpectedError',
        code: 1100,
        reason: `cannot parse expression: ${expression}`,
      });
    const [, field, op, template, literal] = match as unknown as [
      string,
      string,
      string,
      string | undefined,
      string | undefined,
    ];
    const value = template === undefined ? literal === 'true' : templateValue(templates, template, expression);
    return { field, op, value };
  });
  return (row) =>
    clauses.every(({ field, op, value }) => {
      const actual = row[field] as string | number | boolean;
      switch (op) {
        case '==':
          return actual === value;
        case '!=':
          return actual !== value;
        case '<':
          return actual < (value as number | string);
        case '<=':
          return actual <= (value as number | string);
        case '>':
          return actual > (value as number | string);
        case '>=':
          return actual >= (value as number | string);
        default:
          return (value as unknown[]).includes(actual);
      }
    });
}

function templateValue(templates: Json, name: string, expression: string): unknown {
  const value = templates[name] as
    | {
        val?: string;
        string_val?: string;
        int64_val?: string;
        bool_val?: boolean;
        array_val?: { string_data?: { data: string[] }; long_data?: { data: string[] } };
      }
    | undefined;
  if (!value)
    throw new MilvusStatusError({
      error_code: 'UnexpectedError',
      code: 1100,
      reason: `template {${name}} has no value in ${expression}`,
    });
  switch (value.val) {
    case 'string_val':
      return value.string_val;
    case 'int64_val':
      return Number(value.int64_val);
    case 'bool_val':
      return value.bool_val;
    default:
      return value.array_val?.string_data?.data ?? value.array_val?.long_data?.data.map(Number) ?? [];
  }
}

function queryVector(bytes: Uint8Array): number[] {
  const group = PlaceholderGroup.toObject(PlaceholderGroup.decode(bytes)) as {
    placeholders: Array<{ values: Uint8Array[] }>;
  };
  const raw = group.placeholders[0]?.values[0];
  if (!raw) throw new MilvusStatusError({ error_code: 'UnexpectedError', code: 1100, reason: 'no query vector' });
  const copy = new Uint8Array(raw);
  return Array.from(new Float32Array(copy.buffer, copy.byteOffset, copy.byteLength / 4));
}

function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += (a[i] as number) * (b[i] as number);
    na += (a[i] as number) ** 2;
    nb += (b[i] as number) ** 2;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}
