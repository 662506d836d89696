import { ValidationError } from '@hopline/contracts';
import { describe, expect, it } from 'vitest';
import { BARE_GOLD, paragraphDocId, paragraphText, parseCorpusQuestions, parseMultihopFile } from '../src/index.js';
import { tinyCorpusLines, tinyDatasetLines, tinyQuestionLines } from './fixtures.js';

const corpusFiles = (corpus: string[], questions: string[]) => ({
  corpus: { content: corpus.join('\n'), source: 'corpus.jsonl' },
  questions: { content: questions.join('\n'), source: 'questions.jsonl' },
});

describe('multi-hop file', () => {
  const set = parseMultihopFile(tinyDatasetLines().join('\n') + '\n', 'tiny.jsonl');

  it('multihop file - pools every paragraph into one corpus, identical ones (same title and text) once', () => {
    expect(set.documents.map((doc) => doc.title).sort()).toEqual(['Bakery', 'Bakery', 'Keeper', 'Lighthouse']);
    expect(set.questions).toHaveLength(2);
  });

  it('multihop file - gold documents follow the supporting paragraphs, in hop order only for MuSiQue', () => {
    const [hotpot, musique] = set.questions;
    const paragraph = (title: string, sentences: string[]) => paragraphDocId({ title, sentences });
    expect(musique).toMatchObject({
      dataset: 'musique',
      answers: ['sourdough', 'bread'],
      hopOrdered: true,
      goldDocIds: [
        paragraph('Keeper', ['Anna Berg keeps the lighthouse on Cape Rock.']),
        paragraph('Bakery', ['The bakery sells sourdough.']),
      ],
    });
    expect(hotpot).toMatchObject({ dataset: 'hotpotqa', hopOrdered: false, answerable: true, apart: '' });
    expect(hotpot?.goldDocIds).toEqual([
      paragraph('Lighthouse', ['The lighthouse stands on Cape Rock.', ' It was built in 1890.']),
    ]);
  });

  it('multihop file - a line that breaks the schema fails with its line number', () => {
    const lines = tinyDatasetLines();
    lines[1] = lines[1]!.replace('"musique"', '"squad"');
    expect(() => parseMultihopFile(lines.join('\n'), 'tiny.jsonl')).toThrow(/tiny\.jsonl:2: dataset/);
    expect(() => parseMultihopFile('{oops', 'bad.jsonl')).toThrow(ValidationError);
  });

  it('multihop file - a supporting paragraph index past the paragraphs is rejected', () => {
    const line = JSON.parse(tinyDatasetLines()[0]!) as { supporting: Array<{ paragraph_index: number }> };
    line.supporting[0]!.paragraph_index = 9;
    expect(() => parseMultihopFile(JSON.stringify(line), 'x')).toThrow(/points past the 2 paragraphs/);
  });

  it('multihop file - paragraph text joins HotpotQA and 2Wiki sentences with exactly one space', () => {
    expect(paragraphText({ title: 't', sentences: ['First.', ' Second.'] })).toBe('First. Second.');
    expect(paragraphText({ title: 't', sentences: ['First.', 'Second.'] })).toBe('First. Second.');
  });
});

describe('corpus and questions', () => {
  it('corpus format - documents keep their ids and dates, questions their evidence as gold', () => {
    const set = parseCorpusQuestions(corpusFiles(tinyCorpusLines(), tinyQuestionLines()));
    expect(set.documents).toHaveLength(4);
    expect(set.documents[1]).toMatchObject({ docId: 'd2', title: '', effectiveDate: '2023-05-21' });
    expect(set.questions[0]).toMatchObject({
      id: 'c1',
      dataset: 'chronoqa',
      answers: ['是的'],
      goldDocIds: ['d1', 'd2'],
      hopOrdered: false,
      answerable: true,
      apart: '',
    });
  });

  it('corpus format - a question whose gold document is a bare date is set apart', () => {
    const set = parseCorpusQuestions(corpusFiles(tinyCorpusLines(), tinyQuestionLines()));
    expect(set.questions[1]?.apart).toBe(BARE_GOLD);
  });

  it('corpus format - evidence missing from the corpus, a repeated id or a bad date is refused', () => {
    const questions = tinyQuestionLines();
    questions[0] = questions[0]!.replace('"d1"', '"d9"');
    expect(() => parseCorpusQuestions(corpusFiles(tinyCorpusLines(), questions))).toThrow(
      /question c1 needs document d9, not in the corpus/,
    );
    const corpus = tinyCorpusLines();
    expect(() => parseCorpusQuestions(corpusFiles([...corpus, corpus[0]!], tinyQuestionLines()))).toThrow(
      /document id d1 appears twice/,
    );
    corpus[0] = corpus[0]!.replace('"published_at":null', '"published_at":"May 2023"');
    expect(() => parseCorpusQuestions(corpusFiles(corpus, tinyQuestionLines()))).toThrow(
      /corpus\.jsonl:1: published_at: must start with an ISO date/,
    );
  });

  it('corpus format - a question without a data set is reported under its file name; an unanswerable one needs no evidence', () => {
    const line = { id: 'u1', question: '谁赢了比赛？', answer: '', answerable: false, evidence: [] };
    const set = parseCorpusQuestions({
      corpus: { content: tinyCorpusLines().join('\n'), source: 'c.jsonl' },
      questions: { content: JSON.stringify(line), source: 'dir/support-tickets.jsonl' },
    });
    expect(set.questions[0]).toMatchObject({
      dataset: 'support-tickets',
      answerable: false,
      answers: [],
      goldDocIds: [],
    });
    const answerable = JSON.stringify({ ...line, answerable: true });
    expect(() =>
      parseCorpusQuestions({
        corpus: { content: tinyCorpusLines().join('\n'), source: 'c.jsonl' },
        questions: { content: answerable, source: 'q.jsonl' },
      }),
    ).toThrow(/q\.jsonl:1: evidence: an answerable question needs at least one evidence document/);
  });
});
