import { segmentChinese } from './chinese.js';
import { ENGLISH_STOP_WORDS, lightStem } from './english.js';
import { foldText } from './normalize.js';

/** Turns a text into index terms; the same function serves documents and queries. */
export interface Tokenizer {
  tokenize(text: string): string[];
}

export interface TokenizerOptions {
  /** Drop English and Chinese function words (default true). */
  stopWords?: boolean;
  /** Apply the light English stemmer (default true). */
  stem?: boolean;
}

const HAN = /[\u3400-\u9fff\uf900-\ufaff]/;
const HAN_RUN = /[\u3400-\u9fff\uf900-\ufaff]+/g;
// A word, possibly joined by connectors into an identifier: top_p, gpt-4, v1.2, o'neill, c++.
const WORD = /[\p{L}\p{N}]+(?:['._\-/][\p{L}\p{N}]+)*(?:\+\+|#)?/gu;
const CONNECTOR = /['._\-/]/;
const ALPHA = /^\p{L}+$/u;
const DIGITS = /^\p{N}+$/u;
const LETTER_OR_DIGIT_RUN = /\p{L}+|\p{N}+/gu;
// Numbered articles, chapters and clauses ("第十二条", "第 12 条") stay one term even when
// digits split them across Han and non-Han runs.
const NUMBERED_ARTICLE = /第\s*[0-9零〇一二两三四五六七八九十百千万]+\s*[条章节款项编部篇卷回集期届次]/g;
// "RFC 7231" and "rfc-7231" also yield "rfc7231", so every spelling meets the others.
const JOINABLE_GAP = /^[ -]$/;

class MixedLanguageTokenizer implements Tokenizer {
  constructor(
    private readonly stopWords: boolean,
    private readonly stem: boolean,
  ) {}

  tokenize(text: string): string[] {
    const folded = foldText(text).toLowerCase();
    const out: string[] = [];
    if (!HAN.test(folded)) {
      this.latin(folded, out);
      return out;
    }
    let last = 0;
    for (const match of folded.matchAll(HAN_RUN)) {
      this.latin(folded.slice(last, match.index), out);
      segmentChinese(match[0], out, this.stopWords);
      last = match.index + match[0].length;
    }
    this.latin(folded.slice(last), out);
    for (const match of folded.matchAll(NUMBERED_ARTICLE)) {
      const article = match[0].replace(/\s+/g, '');
      // jieba usually emits an all-Han article whole already; a second copy would double its tf.
      if (!out.includes(article)) out.push(article);
    }
    return out;
  }

  private latin(text: string, out: string[]): void {
    let previousWord: string | undefined;
    let previousEnd = -1;
    for (const match of text.matchAll(WORD)) {
      let word = match[0];
      if (word.endsWith("'s")) word = word.slice(0, -2);
      if (
        previousWord !== undefined &&
        DIGITS.test(word) &&
        JOINABLE_GAP.test(text.slice(previousEnd, match.index))
      ) {
        out.push(previousWord + word);
      }
      previousWord = undefined;
      if (CONNECTOR.test(word)) {
        this.compound(word, out);
      } else {
        this.simple(word, out);
        if (ALPHA.test(word) && !this.isStopWord(word)) previousWord = word;
      }
      previousEnd = match.index + match[0].length;
    }
  }

  /** An identifier: kept whole, its parts indexed too, and letters+digits parts joined. */
  private compound(word: string, out: string[]): void {
    out.push(word);
    const parts = word.split(/['._\-/]+/).filter((part) => part.length > 0);
    for (const part of parts) {
      if (part.length > 1 || DIGITS.test(part)) this.simple(part, out);
    }
    if (parts.length === 2 && ALPHA.test(parts[0] ?? '') && DIGITS.test(parts[1] ?? '')) out.push(parts.join(''));
  }

  private simple(word: string, out: string[]): void {
    if (ALPHA.test(word)) {
      if (this.isStopWord(word)) return;
      out.push(this.stem ? lightStem(word) : word);
      return;
    }
    out.push(word);
    if (DIGITS.test(word)) return;
    // Letters and digits mixed ("rfc7231", "1990s"): the whole term, plus each run.
    for (const run of word.matchAll(LETTER_OR_DIGIT_RUN)) {
      const part = run[0];
      if (DIGITS.test(part)) out.push(part);
      else if (part.length > 1 && !this.isStopWord(part)) out.push(this.stem ? lightStem(part) : part);
    }
  }

  private isStopWord(word: string): boolean {
    return this.stopWords && ENGLISH_STOP_WORDS.has(word);
  }
}

export function createTokenizer(options: TokenizerOptions = {}): Tokenizer {
  return new MixedLanguageTokenizer(options.stopWords ?? true, options.stem ?? true);
}
