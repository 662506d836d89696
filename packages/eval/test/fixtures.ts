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

/** A corpus-and-questions pair in the ChronoQA layout: two events, a distractor, a bare date. */
export function tinyCorpusLines(): string[] {
  return [
    {
      id: 'd1',
      title: '',
      text: '2023年5月4日，北风实验室发布了天穹项目，李明担任负责人。',
      published_at: null,
      lang: 'zh',
    },
    {
      id: 'd2',
      title: '',
      text: '2023年5月20日，南湖大学举办了春季运动会，三千名学生参加。',
      published_at: '2023-05-21',
    },
    { id: 'd3', title: '', text: '2022年1月3日，东港市举办了元宵灯会，游客人数创下新高。', published_at: null },
    { id: 'd4', title: '', text: '2019年1月14日', published_at: null },
  ].map((line) => JSON.stringify(line));
}

export function tinyQuestionLines(): string[] {
  return [
    {
      id: 'c1',
      dataset: 'chronoqa',
      question: '北风实验室发布天穹项目和南湖大学举办春季运动会是在同一个月吗？',
      answer: '是的',
      type: 'aggregate',
      answerable: true,
      evidence: [
        { doc_id: 'd1', fact: null },
        { doc_id: 'd2', fact: null },
      ],
      question_date: '2024-01-01',
    },
    {
      id: 'c2',
      dataset: 'chronoqa',
      question: '北风实验室发布天穹项目和东港市元宵灯会哪个事件发生得更早？',
      answer: '东港市元宵灯会',
      type: 'aggregate',
      answerable: true,
      evidence: [
        { doc_id: 'd3', fact: null },
        { doc_id: 'd4', fact: null },
      ],
      question_date: '2024-01-01',
    },
  ].map((line) => JSON.stringify(line));
}
