import type { FastifyPluginAsync } from 'fastify';
import type { StaticAsset, StaticSite } from '../static-site.js';

/** The web page: its files, served to anyone (the page asks for the key itself). */
export const siteRoutes: FastifyPluginAsync<{ site: StaticSite }> = async (app, { site }) => {
  const serve = (url: string, asset: StaticAsset) =>
    app.get(url, { schema: { hide: true } }, (_request, reply) =>
      reply
        .headers({
          'Content-Type': asset.contentType,
          'Cache-Control': 'no-cache',
          // The page renders answers and document text: nothing it shows may run as script.
          'Content-Security-Policy':
            "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'",
          'X-Content-Type-Options': 'nosniff',
        })
        .send(asset.body),
    );
  for (const [file, asset] of site.assets) {
    serve(`/${file}`, asset);
    if (file === 'index.html') serve('/', asset);
  }
};
