import { entityKey } from '@hopline/text';
import type { EvidenceItem, SynthesisHop } from '../reasoner/reasoner.js';
import { isAbout } from './bridge.js';
import { comparedOptions, questionAnchors } from './question.js';
import type { TitleConventions } from './text.js';

/**
 * The entities a broken chain was looking for where it broke, read from its hops: for each
 * (sub-)question whose last hop found nothing, the entity that hop was sent to find — the answer
 * of the hop before it on the same (sub-)question (the bridge), or, for a first hop, the option
 * of the question it asks about (an event compared by date), else the one entity it names that
 * the question names too. The abstention names them ("a document about
 * X") instead of repeating the search words of the failed query. Empty where some broken
 * (sub-)question has no such entity: then only its search words tell what it looked for.
 */
export function unfoundEntities(question: string, hops: readonly SynthesisHop[]): string[] {
  const asked = entityKey(question);
  const options = comparedOptions(question);
  const foci = [...new Set(hops.map((hop) => hop.focus))];
  const entities: string[] = [];
  for (const focus of foci) {
    const own = hops.filter((hop) => hop.focus === focus);
    if (!own.at(-1)?.finding.unknown) continue;
    const before = own.at(-2);
    const anchors = questionAnchors(focus).filter((anchor) => asked.includes(entityKey(anchor)));
    const entity = before
      ? before.finding.answer
      : options.includes(focus)
        ? focus
        : anchors.length === 1
          ? anchors[0]
          : undefined;
    if (!entity || before?.finding.unknown) return [];
    if (!entities.some((seen) => entityKey(seen) === entityKey(entity))) entities.push(entity);
  }
  return entities;
}

/**
 * The options of a choice that no document in the evidence is about, where the option's hop read
 * titled documents only (a choice between two goalkeepers whose hop for the second read the
 * first's document). Weighing such an option by another's document picks the one that was found,
 * whatever the question asks; the answer names the option's document as missing instead.
 * Untitled chunks (news, tickets) say nothing of what they are about, and a hop none of whose
 * chunks is in the evidence is not judged here.
 */
export function unfoundOptions(
  entries: ReadonlyArray<{ option: string; hop: SynthesisHop | undefined }>,
  evidence: readonly EvidenceItem[],
  titles: TitleConventions,
): string[] {
  return entries
    .filter(({ option, hop }) => {
      if (!hop) return true;
      const cited = hop.finding.citedChunkIds.flatMap((chunkId) =>
        evidence.filter((item) => item.chunk.chunkId === chunkId).map((item) => item.chunk),
      );
      return (
        cited.length > 0 &&
        cited.every((chunk) => chunk.title.trim() !== '') &&
        !evidence.some((item) => isAbout(item.chunk, option, titles))
      );
    })
    .map(({ option }) => option);
}
