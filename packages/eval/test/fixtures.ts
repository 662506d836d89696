/** A two-question dataset in the dev set's line format; the first paragraph is shared. */
export function tinyDatasetLines(): string[] {
  const shared = { title: 'Lighthouse', sentences: ['The lighthouse stands on Cape Rock.', ' It was built in 1890.'] };
  return [
    {
      id: 'q1',
      dataset: 'hotpotqa',
      question: 'When was the lighthouse on Cape Rock built?',
      answer: '1890',
      answer_aliases: [],
      type: 'bridge',
      supporting: [{ title: 'Lighthouse', sent_ids: [0, 1], paragraph_index: 0 }],
      paragraphs: [shared, { title: 'Bakery', sentences: ['The bakery sells sourdough.'] }],
    },
    {
      id: 'q2',
      dataset: 'musique',
      question: 'Who keeps the lighthouse, and what does the bakery sell?',
      answer: 'sourdough',
      answer_aliases: ['bread'],
      type: '2hop',
      supporting: [
        { title: 'Keeper', sent_ids: [0], paragraph_index: 1 },
        { title: 'Bakery', sent_ids: [0], paragraph_index: 2 },
      ],
      paragraphs: [
        shared,
        { title: 'Keeper', sentences: ['Anna Berg keeps the lighthouse on Cape Rock.'] },
        { title: 'Bakery', sentences: ['The bakery sells sourdough.'] },
        { title: 'Bakery', sentences: ['A different bakery paragraph about rye.'] },
      ],
    },
  ].map((line) => JSON.stringify(line));
}
