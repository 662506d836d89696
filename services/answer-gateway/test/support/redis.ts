import { createConnection } from 'node:net';

export interface RedisTarget {
  url: string | undefined;
  skipReason?: string;
}

function answersPing(url: string, timeoutMs = 1_000): Promise<boolean> {
  const parsed = new URL(url);
  return new Promise((resolve) => {
    const socket = createConnection({ host: parsed.hostname, port: Number(parsed.port || 6379) });
    const finish = (answered: boolean) => {
      socket.destroy();
      resolve(answered);
    };
    socket.setTimeout(timeoutMs, () => finish(false));
    socket.once('error', () => finish(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (chunk: Buffer) => finish(chunk.toString('latin1').startsWith('+PONG')));
  });
}

/**
 * The real Redis the cache tests use: REDIS_URL, else 127.0.0.1:6379. In CI a missing server
 * fails the suite; elsewhere the suite skips after a loud notice.
 */
export async function findRedis(env: NodeJS.ProcessEnv = process.env): Promise<RedisTarget> {
  const url = env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  if (await answersPing(url)) return { url };
  const reason = `no Redis answers at ${url}`;
  if (env.CI) throw new Error(`Redis-backed cache tests cannot run: ${reason}. Start redis-server or set REDIS_URL.`);
  console.warn(
    `\n!!!!!!!!\n!!  SKIPPING Redis-backed answer-cache tests: ${reason}. Start redis-server or set REDIS_URL (in CI they fail instead).\n!!!!!!!!\n`,
  );
  return { url: undefined, skipReason: reason };
}
