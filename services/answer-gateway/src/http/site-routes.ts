import type { FastifyPluginAsync } from 'fastify';
import { problems } from '../problem.js';
import type { StaticSite } from '../static-site.js';
import { replyProblem } from './problem-reply.js';

/** The web page: four files, served to anyone (the page asks for the key itself). */
export const siteRoutes: FastifyPluginAsync<{ site: StaticSite }> = async (app, { site }) => {
  for (const [url, file] of [
    ['/', 'index.html'],
    ['/index.html', 'index.html'],
    ['/app.js', 'app.js'],
    ['/chain.js', 'chain.js'],
    ['/style.css', 'style.css'],
  ] as const) {
    app.get(url, { schema: { hide: true } }, (_request, reply) => {
      const asset = site.get(file);
      if (!asset) return replyProblem(reply, problems.notFound('no such page'));
      return reply
        .headers({
          'Content-Type': asset.contentType,
          'Cache-Control': 'no-cache',
          // The page renders answers and document text: nothing it shows may run as script.
          'Content-Security-Policy':
            "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'",
          'X-Content-Type-Options': 'nosniff',
        })
        .send(asset.body);
    });
  }
};
