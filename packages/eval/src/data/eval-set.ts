import { ValidationError } from '@hopline/contracts';

/** A document of the corpus every question is asked against. */
export interface EvalDocument {
  docId: string;
  title: string;
  text: string;
  /** The day the document speaks for, ISO ('' when unknown). */
  effectiveDate: string;
}

export interface EvalQuestion {
  id: string;
  /** The data set it comes from: figures are reported per data set. */
  dataset: string;
  question: string;
  /** The gold answer first, then its aliases; none for an unanswerable question. */
  answers: string[];
  /** The documents the answer needs, without repeats; in hop order when `hopOrdered`. */
  goldDocIds: string[];
  /** Gold document n is what hop n should find (MuSiQue's decomposition order). */
  hopOrdered: boolean;
  /** False when the corpus does not hold the answer: the right outcome is an abstention. */
  answerable: boolean;
  /** Why its retrieval figures are reported apart from its data set's ('' when they are not). */
  apart: string;
}

/** A corpus and the questions asked against it: every format loads into this. */
export interface EvalSet {
  documents: EvalDocument[];
  questions: EvalQuestion[];
}

// Under this many characters a gold "document" is a bare date or a placeholder, not text a
// retriever could rank; questions that need one are reported apart (see the ChronoQA README).
const BARE_GOLD_CHARS = 25;
export const BARE_GOLD = 'bare gold';

/** The name a question's figures are reported under: its data set, or its data set set apart. */
export function reportGroup(question: Pick<EvalQuestion, 'dataset' | 'apart'>): string {
  return question.apart === '' ? question.dataset : `${question.dataset} (${question.apart})`;
}

/**
 * Checks that every gold document is in the corpus and that ids are unique, and sets apart
 * the questions one of whose gold documents has no text to rank.
 */
export function completeSet(documents: EvalDocument[], questions: Array<Omit<EvalQuestion, 'apart'>>): EvalSet {
  const byId = new Map<string, EvalDocument>();
  for (const document of documents) {
    if (byId.has(document.docId)) throw new ValidationError(`document id ${document.docId} appears twice`);
    byId.set(document.docId, document);
  }
  const seen = new Set<string>();
  const complete = questions.map((question): EvalQuestion => {
    if (seen.has(question.id)) throw new ValidationError(`question id ${question.id} appears twice`);
    seen.add(question.id);
    const gold = question.goldDocIds.map((docId) => {
      const document = byId.get(docId);
      if (!document) throw new ValidationError(`question ${question.id} needs document ${docId}, not in the corpus`);
      return document;
    });
    const bare = gold.some((document) => [...document.text.trim()].length < BARE_GOLD_CHARS);
    return { ...question, apart: bare ? BARE_GOLD : '' };
  });
  return { documents, questions: complete };
}
