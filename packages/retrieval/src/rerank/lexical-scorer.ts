import type { Tokenizer } from '@hopline/text';
import { rerankTokenizer, type RelevanceScorer } from './relevance-scorer.js';

export interface LexicalScorerOptions {
  tokenizer?: Tokenizer;
  k1?: number;
  b?: number;
}

/**
 * The fallback when no cross-encoder answers: BM25 with the candidates themselves as the
 * collection, times the share of distinct query terms a candidate covers, so a passage that
 * answers every part of the question outranks one that repeats a single part.
 */
export function createLexicalScorer(options: LexicalScorerOptions = {}): RelevanceScorer {
  const tokenizer = options.tokenizer ?? rerankTokenizer;
  const k1 = options.k1 ?? 1.2;
  const b = options.b ?? 0.75;
  return {
    name: 'lexical',
    async score(query, texts, signal) {
      signal.throwIfAborted();
      const querySet = new Set(tokenizer.tokenize(query));
      const queryTerms = [...querySet];
      if (queryTerms.length === 0 || texts.length === 0) return texts.map(() => 0);
      const docs = texts.map((text) => {
        // Only the query's terms are ever read back: the rest of a passage is its length.
        const counts = new Map<string, number>();
        const tokens = tokenizer.tokenize(text);
        for (const token of tokens) if (querySet.has(token)) counts.set(token, (counts.get(token) ?? 0) + 1);
        return { counts, length: tokens.length };
      });
      const averageLength = docs.reduce((sum, doc) => sum + doc.length, 0) / docs.length || 1;
      const idf = new Map(
        queryTerms.map((term) => {
          const df = docs.filter((doc) => doc.counts.has(term)).length;
          return [term, Math.log(1 + (docs.length - df + 0.5) / (df + 0.5))];
        }),
      );
      return docs.map((doc) => {
        let score = 0;
        let covered = 0;
        for (const term of queryTerms) {
          const tf = doc.counts.get(term) ?? 0;
          if (tf === 0) continue;
          covered++;
          score += ((idf.get(term) ?? 0) * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * doc.length) / averageLength));
        }
        return score * (covered / queryTerms.length);
      });
    },
  };
}
