import type { Chunk__Output } from '@hopline/contracts';
import { offlineAbstains, synthesizeOffline } from '../../src/offline/synthesis.js';
import type { HopFinding, SynthesisInput } from '../../src/reasoner/reasoner.js';
import type { ReasoningSwitch } from '../../src/switches.js';

function finding(answer: string, cited: readonly string[]): HopFinding {
  return {
    answer,
    unknown: false,
    done: true,
    nextQuery: '',
    confidence: 0.8,
    citedChunkIds: [...cited],
    bridgeEntities: [answer],
  };
}

/**
 * What offline synthesis writes for a question answered in hops, one per focus (an event, a
 * plan's item), each hop citing the chunks given for it, with the switches named off; and
 * whether it abstains.
 */
export async function synthesized(
  question: string,
  hops: readonly { focus: string; answer: string; cited: Chunk__Output[] }[],
  switchedOff: readonly ReasoningSwitch[] = [],
): Promise<{ answer: string; abstains: boolean }> {
  const chunks = hops.flatMap((hop) => hop.cited);
  const input: SynthesisInput = {
    question,
    hops: hops.map((hop, index) => ({
      hop: index + 1,
      focus: hop.focus,
      query: hop.focus,
      finding: finding(
        hop.answer,
        hop.cited.map((item) => item.chunkId),
      ),
    })),
    evidence: chunks.map((item, index) => ({ index: index + 1, chunk: item, hop: 1, bridgeEntity: '' })),
    complete: true,
    missing: '',
    switchedOff,
  };
  let answer = '';
  for await (const piece of synthesizeOffline(input)) answer += piece;
  return { answer, abstains: offlineAbstains(input) };
}
