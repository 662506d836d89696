import * as grpc from '@grpc/grpc-js';
import { connectNatsBus } from '@hopline/bus';
import { codecs, loadHoplineGrpc, subjects } from '@hopline/contracts';
import { questionJobsStream } from '@hopline/questions';
import { waitFor } from '@hopline/test-support';
import type { ServiceProcess } from '../support/service-process.js';
import { BULK_KB, FLEET_KB, type Fleet } from './fleet.js';
import type { Scenario } from './scenarios.js';

/** Byte strings no Hopline message is: empty, short, long, random, text, and another message. */
function garbage(): Uint8Array[] {
  let seed = 9;
  const random = (length: number) =>
    Uint8Array.from({ length }, () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % 256;
    });
  const text = (value: string) => new TextEncoder().encode(value);
  return [
    random(1),
    random(7),
    random(64),
    random(4_096),
    Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0x0f]),
    // An unknown field (99) of wire type 6, which does not exist. Bytes that break only a known
    // field do not do: protobufjs reads a known field by its number whatever its wire type, and
    // a string cut short as far as it goes, so they decode to a valid request.
    Uint8Array.from([0x9e, 0x06, 0x01]),
    text('{"question":"hello"}'),
    text('\u0000\u0001 not protobuf'),
    codecs.workerPresence.encode({ workerId: 'poison', ingestLag: 3 }),
    new Uint8Array(0),
  ];
}

interface Tally {
  sent: number;
  /** Answered with the error a client can read: problem+json, a gRPC status, a bus error envelope. */
  refused: number;
  /** Anything else: a 5xx, a success for garbage, a hang, a malformed reply. */
  wrong: string[];
}

/** HTTP requests no client should send, each expected to be a 4xx problem+json. */
function badHttpRequests(fleet: Fleet): Array<{ path: string; init: RequestInit }> {
  const auth = { Authorization: `Bearer ${fleet.apiKey}` };
  const json = { ...auth, 'Content-Type': 'application/json' };
  const askBodies: string[] = [
    '',
    'not json',
    '{',
    '[]',
    'null',
    '1',
    '"question"',
    '{}',
    '{"question":1}',
    '{"question":""}',
    '{"question":"   "}',
    JSON.stringify({ question: 'x'.repeat(5_000) }),
    '{"question":"Who?","kbIds":"demo"}',
    '{"question":"Who?","kbIds":[]}',
    '{"question":"Who?","kbIds":[""]}',
    '{"question":"Who?","kbIds":["someone-else"]}',
    '{"question":"Who?","kbIds":["a.b"]}',
    '{"question":"Who?","kbIds":["*"]}',
    '{"question":"Who?","maxHops":0}',
    '{"question":"Who?","maxHops":99}',
    '{"question":"Who?","maxHops":1.5}',
    '{"question":"Who?","extra":true}',
    '{"question":"Who?","__proto__":{"admin":true}}',
    JSON.stringify({ question: 'Who?', pad: 'x'.repeat(70_000) }),
  ];
  const documentBodies: string[] = [
    '',
    'nope',
    '{}',
    '{"documents":[]}',
    '{"documents":[{}]}',
    '{"documents":"x"}',
    '{"docId":"a","text":1}',
    '{"docId":"","title":"t","text":"x"}',
    '{"docId":"a","title":"t"}',
    '{"docId":["a"],"title":"t","text":"x"}',
    '{"docId":"a","title":"t","text":"x","version":99999999999999}',
    '{"docId":"a","title":"t","text":"x","version":-1}',
    '{"docId":"a","title":"t","text":"x","unknown":1}',
    JSON.stringify({ documents: Array.from({ length: 1_001 }, (_, i) => ({ docId: `d${i}`, title: 't', text: 'x' })) }),
  ];
  const requests: Array<{ path: string; init: RequestInit }> = [];
  for (const body of askBodies) {
    requests.push({ path: '/v1/ask', init: { method: 'POST', headers: json, body } });
    requests.push({
      path: '/v1/ask',
      init: { method: 'POST', headers: { ...json, Accept: 'text/event-stream' }, body },
    });
  }
  for (const body of documentBodies) {
    for (const kb of [FLEET_KB, BULK_KB]) {
      requests.push({ path: `/v1/kbs/${kb}/documents`, init: { method: 'POST', headers: json, body } });
    }
  }
  for (const kb of ['a.b', '*', '%3E', 'someone-else', 'x'.repeat(200)]) {
    requests.push({
      path: `/v1/kbs/${kb}/documents`,
      init: { method: 'POST', headers: json, body: '{"docId":"a","title":"t","text":"x"}' },
    });
    requests.push({ path: `/v1/kbs/${kb}/documents/a`, init: { method: 'DELETE', headers: auth } });
  }
  for (const id of ['nope', 'a.b', '*', '%3E', 'x'.repeat(300), '00000000-0000-0000-0000-000000000000']) {
    for (const lastEventId of ['0', 'abc', '-1', '1e99', '']) {
      requests.push({
        path: `/v1/questions/${id}/events`,
        init: { headers: { ...auth, Accept: 'text/event-stream', 'Last-Event-ID': lastEventId } },
      });
    }
    requests.push({ path: `/v1/questions/${id}`, init: { method: 'DELETE', headers: auth } });
  }
  for (const authorization of ['', 'Bearer', 'Bearer wrong', 'Basic Zm9vOmJhcg==', `bearer  ${fleet.apiKey}x`]) {
    requests.push({
      path: '/v1/ask',
      init: {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: authorization },
        body: '{"question":"Who?"}',
      },
    });
  }
  for (const [method, path] of [
    ['GET', '/v1/ask'],
    ['PUT', '/v1/ask'],
    ['POST', '/v1/nothing'],
    ['GET', '/v1/kbs/demo/documents'],
    ['PATCH', '/v1/questions/x'],
    ['POST', '/v1/ask/../ask'],
  ] as const) {
    requests.push({ path, init: { method, headers: json, ...(method === 'GET' ? {} : { body: '{}' }) } });
  }
  return requests;
}

/** Every bad request to each gateway replica. */
async function sendHttp(fleet: Fleet, tally: Tally): Promise<void> {
  for (const [gateway, { path, init }] of fleet.gatewayUrls.flatMap((url) =>
    badHttpRequests(fleet).map((request) => [url, request] as const),
  )) {
    tally.sent += 1;
    const body = typeof init.body === 'string' ? ` ${init.body.slice(0, 40)}` : '';
    const what = `HTTP ${init.method ?? 'GET'} ${path.slice(0, 60)}${body}`;
    try {
      const response = await fetch(`${gateway}${path}`, { ...init, signal: AbortSignal.timeout(30_000) });
      const type = response.headers.get('content-type') ?? '';
      await response.body?.cancel();
      if (response.status >= 400 && response.status < 500 && type.startsWith('application/problem+json')) {
        tally.refused += 1;
      } else tally.wrong.push(`${what}: ${response.status} ${type}`);
    } catch (error) {
      tally.wrong.push(`${what}: ${(error as Error).message}`);
    }
  }
}

/** Every method of the gRPC servers, called with bytes that are not its request. */
async function sendGrpc(fleet: Fleet, tally: Tally): Promise<void> {
  const v1 = loadHoplineGrpc().hopline.v1;
  const servers: Array<[string, { service: grpc.ServiceDefinition }]> = [
    ...fleet.grpc.gateways.map((address): [string, { service: grpc.ServiceDefinition }] => [address, v1.AnswerGateway]),
    [fleet.grpc.queryUnderstanding, v1.QueryUnderstanding],
    [fleet.grpc.reranker, v1.Reranker],
  ];
  const identity = (bytes: Buffer) => bytes;
  for (const [address, { service }] of servers) {
    const client = new grpc.Client(address, grpc.credentials.createInsecure());
    try {
      for (const [name, method] of Object.entries(service)) {
        for (const bytes of garbage()) {
          tally.sent += 1;
          const what = `gRPC ${name} with ${bytes.length} bytes`;
          const metadata = new grpc.Metadata();
          metadata.set('authorization', `Bearer ${fleet.apiKey}`);
          const options = { deadline: Date.now() + 10_000 };
          const status = await new Promise<grpc.status>((resolve) => {
            if (method.responseStream) {
              const call = client.makeServerStreamRequest(
                method.path,
                identity,
                identity,
                Buffer.from(bytes),
                metadata,
                options,
              );
              call.on('data', () => undefined);
              call.on('status', (s: grpc.StatusObject) => resolve(s.code));
              call.on('error', () => undefined);
            } else {
              client.makeUnaryRequest(method.path, identity, identity, Buffer.from(bytes), metadata, options, (error) =>
                resolve(error ? ((error as grpc.ServiceError).code ?? grpc.status.UNKNOWN) : grpc.status.OK),
              );
            }
          });
          // A refusal names what is wrong; DEADLINE_EXCEEDED would be a hang, OK an answer to garbage.
          if (status !== grpc.status.OK && status !== grpc.status.DEADLINE_EXCEEDED) tally.refused += 1;
          else tally.wrong.push(`${what}: ${grpc.status[status]}`);
        }
      }
    } finally {
      client.close();
    }
  }
}

/**
 * Raw payloads on every subject a service listens to. A request subject must answer with an
 * error envelope; the streams (ingest, question jobs) must take the poison off their consumers
 * (ingest commands go to the dead letters); nothing may crash.
 */
async function sendNats(fleet: Fleet, tally: Tally): Promise<number> {
  const bus = await connectNatsBus({ url: fleet.nats.url, name: 'fault-suite-poison' });
  let poisonIngests = 0;
  try {
    const payloads = garbage();
    for (const subject of [subjects.retrieve, subjects.documentLookup]) {
      for (const bytes of payloads) {
        tally.sent += 1;
        try {
          await bus.request(subject, bytes, { timeoutMs: 10_000 });
          tally.wrong.push(`NATS ${subject} with ${bytes.length} bytes: answered as if valid`);
        } catch (error) {
          const code = (error as { code?: string }).code;
          if (code && code !== 'deadline_exceeded' && code !== 'no_responders') tally.refused += 1;
          else tally.wrong.push(`NATS ${subject} with ${bytes.length} bytes: ${code ?? (error as Error).message}`);
        }
      }
    }
    const jobs = await bus.durableStream(questionJobsStream);
    const ingest = await bus.durableStream();
    for (const [index, bytes] of payloads.entries()) {
      // Fire-and-forget subjects: nothing answers; the services must shrug them off.
      for (const subject of [
        subjects.retrievalPresence,
        subjects.cancel(`poison-${index}`),
        subjects.readers(`poison-${index}`),
        subjects.kbChanged('acme', FLEET_KB),
        subjects.deadLetter,
        subjects.events(`poison-${index}`),
      ]) {
        tally.sent += 1;
        tally.refused += 1;
        bus.publish(subject, bytes);
      }
      tally.sent += 2;
      await jobs.publish(subjects.ask(`poison-${index}`), bytes, { msgId: `poison-ask-${index}-${Date.now()}` });
      await ingest.publish(subjects.ingest('acme', BULK_KB), bytes, { msgId: `poison-ingest-${index}-${Date.now()}` });
      tally.refused += 2;
      poisonIngests += 1;
    }
    await bus.flush();
  } finally {
    await bus.drain();
  }
  return poisonIngests;
}

async function deadLettered(worker: ServiceProcess): Promise<number> {
  const text = await (await fetch(`${worker.opsUrl}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('hopline_ingest_dead_letters_total'))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

export const poisonInputs: Scenario = {
  id: 'poison-inputs',
  fault: 'malformed inputs over HTTP, gRPC and raw NATS payloads on every subject (poison messages)',
  mustHold: '≥ 300 inputs; 0 crashes; problem+json or error envelopes; poison ingests dead-lettered',
  async run(fleet) {
    const tally: Tally = { sent: 0, refused: 0, wrong: [] };
    const before = await Promise.all(fleet.workers.map(deadLettered));
    await sendHttp(fleet, tally);
    await sendGrpc(fleet, tally);
    const poisonIngests = await sendNats(fleet, tally);
    const dead = await waitFor(
      async () => {
        const now = await Promise.all(fleet.workers.map(deadLettered));
        const added = now.map((count, i) => count - (before[i] ?? 0));
        return added.every((n) => n >= poisonIngests) ? added : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500, description: 'the poison ingests to be dead-lettered' },
    ).catch(async () =>
      (await Promise.all(fleet.workers.map(deadLettered))).map((count, i) => count - (before[i] ?? 0)),
    );
    const all = [fleet.queryUnderstanding, fleet.reranker, ...fleet.workers, ...fleet.reasoners, ...fleet.gateways];
    const crashed = all.filter((service) => !service.running).length;
    return {
      measured: `${tally.sent} inputs (HTTP, gRPC, NATS): ${tally.refused} refused as expected, ${tally.wrong.length} not${tally.wrong.length > 0 ? ` (${tally.wrong.slice(0, 3).join('; ')})` : ''}; ${crashed} processes crashed; ${poisonIngests} poison ingests, dead-lettered ${dead.join(' and ')} times by the two workers`,
      holds: tally.sent >= 300 && tally.wrong.length === 0 && crashed === 0 && dead.every((n) => n >= poisonIngests),
    };
  },
};
