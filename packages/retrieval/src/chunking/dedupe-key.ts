import { hashText, normalizeText } from '@hopline/text';

/**
 * The key duplicates are recognised by: the chunk id when there is one, else a digest of the
 * whole normalised text. Never a prefix: templated openings ("第十二条…", "Article 12 …")
 * would make different chunks collide.
 */
export function dedupeKeyFor(chunkId: string | undefined, text: string): string {
  return chunkId ? chunkId : `text:${hashText(normalizeText(text))}`;
}
