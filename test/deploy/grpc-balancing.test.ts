// The reranker and query-understanding have headless Services, so their name resolves to every
// pod. That only spreads load if Hopline's gRPC clients balance over all resolved addresses;
// this checks it with two real servers behind one target.
import * as grpc from '@grpc/grpc-js';
import { createClient, waitForClientReady } from '@hopline/grpc';
import { afterEach, expect, test } from 'vitest';

const identity = (buffer: Buffer) => buffer;
const definition: grpc.ServiceDefinition = {
  whoAmI: {
    path: '/hopline.test.Who/AmI',
    requestStream: false,
    responseStream: false,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  },
};

const servers: grpc.Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.forceShutdown();
});

async function startServer(name: string): Promise<number> {
  const server = new grpc.Server();
  server.addService(definition, {
    whoAmI: (_call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) =>
      callback(null, Buffer.from(name)),
  });
  servers.push(server);
  return new Promise((resolve, reject) => {
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, port) =>
      error ? reject(error) : resolve(port),
    );
  });
}

function whoAnswers(client: grpc.Client): Promise<string> {
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest('/hopline.test.Who/AmI', identity, identity, Buffer.alloc(0), (error, response) => {
      if (error || !response) reject(error ?? new Error('no response'));
      else resolve(response.toString());
    });
  });
}

test('grpc balancing - a Hopline client spreads its calls over every address its target resolves to', async () => {
  const [first, second] = await Promise.all([startServer('first'), startServer('second')]);
  const client = createClient(
    grpc.makeGenericClientConstructor(definition, 'Who'),
    `ipv4:127.0.0.1:${first},127.0.0.1:${second}`,
  );
  try {
    await waitForClientReady(client, Date.now() + 5_000);
    const answered = new Set<string>();
    // Round robin reaches both once both connections are up; pick_first would stay on one for all 200.
    for (let call = 0; call < 200 && answered.size < 2; call += 1) answered.add(await whoAnswers(client));
    expect([...answered].sort()).toEqual(['first', 'second']);
  } finally {
    client.close();
  }
});
