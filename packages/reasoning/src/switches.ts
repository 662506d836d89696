/**
 * The rules and mechanisms of the reasoning that can be switched off, one at a time, to measure
 * what each earns on held-back questions (`pnpm eval --ablate`). Everything is on unless a
 * caller names it in `switchedOff`; production never does. A new rule or mechanism gets its
 * entry here, and the eval's ablation picks it up by name.
 */
export const REASONING_SWITCHES = {
  parallelPlans: 'a question about several foci fans out into one sub-question per focus (PARALLEL)',
  determinedRole:
    'a role noun after a determiner ("the composer born earlier") makes a comparison plan find role-holders first',
  unknownFusion: "a chain that ends UNKNOWN hands the evidence its previous hop's ranking beside its own",
  unplannedFusion:
    "a chain that went past the hops its analysis planned (a bridge the reasoner read from unexplained words) hands the evidence its last planned hop's ranking fused with the later hops'",
  wholeQuestionFallback:
    'a loop or plan that ends without an answer retrieves the whole question once, after its own ranking',
  timedEvents:
    'a question about when several listed events happened (which first, same month) gets one sub-question per event',
  listSettings:
    'an event of such a list that states no date of its own is looked up in the time the question sets the whole list in: a clause of its own ("2031年4月，A和B是在同一天吗"), a span ("2031年内A、B和C…") or a frame opened by "在" ("在2031年的A和B中"); a date that only opens the first item is that event\'s',
  respectiveFoci:
    'a distributive question ("A和B分别在几月几日开通地铁？", "When were A and B founded, respectively?") gets one sub-question per item, each with the setting and the whole predicate the items share (the setting alone where the predicate names only a kind of event)',
  parentheticalTitles:
    'a title\'s trailing parenthesis disambiguates the name the document is about ("No Harbour (1936 film)" is about No Harbour), as Wikipedia titles do',
  commaTitles:
    'a title\'s part before a comma is the name the document is about ("Elm Park, Dunmore" is about Elm Park), as Wikipedia titles of places do',
  nameForms:
    'a document titled with another form of a name is about it: its initials ("HVT"), the name without a rank ("Orsolan" for "Emperor Orsolan"), the full name of a surname, another spelling of one word ("Katrin" for "Katreen")',
  focusShares:
    "a parallel plan's evidence takes each sub-question's ranking in turn, rank by rank, instead of fusing them by summed reciprocal rank, so a chunk middling for every focus does not push one focus's own chunk out",
  decidedFoci:
    "within those shares, a sub-question whose best chunk stands out (a reranked score at least twice the runner-up's) takes every other turn after its first, so the slots go to the foci whose own chunk may be further down",
  ownFocusWords:
    "a parallel plan's ranking for one sub-question puts after the rest the chunks that state none of its focus's own words (those not every sub-question shares: the item of \"A和B分别…\", not the setting or predicate they all share), so a chunk that matches only the shared words takes no focus's slot",
  uncitedFoci:
    "a parallel plan's sub-question whose hops cited nothing (its chunks state no answer its hop could read) takes its turn among the other foci's citations with its best-ranked chunk, instead of waiting behind their runners-up",
  entityGraph:
    "a hop adds to its retrieved chunks those personalized PageRank ranks highest on the entity–chunk graph, seeded by its query's and the previous hops' entities",
  eventParties:
    'a chunk is about an event only if it names every party the event names, at least by a character: the two a joining word stands between ("雄鹰对猛虎的比赛"), and the names of an event dated to its month or day ("2021年3月5日澜州确诊病例": 澜州); a report of one party alone, or of another place\'s event that day, shares the common words',
  orderJudgements:
    'a yes/no question whether one event came before or after another ("A比B早吗", "A是否在B之前") is answered 是的/不是 from the two events\' dates; off, the answer names the event the dates put at that end, as a which-first answer does',
  yearlessDates:
    'a which-first question where a document dates its event without any year ("6月15日") is read in the year of the other events\' documents, when the answer is the same in each of those years, and the answer says so',
  eventKinds:
    'words that name only the kind of an event ("…的事件", "…分别发生了什么重大事件") are not asked of its chunk: an event option is matched without them, and a distributive question whose predicate names only a kind is answered for each item from a chunk about the item in the setting',
  soughtDocument:
    "a hop sent to find one entity (a later hop's bridge, a sub-question's one entity) answers only from that entity's document (a titled chunk that merely mentions it is about something else); without one the chain is broken there and the answer abstains",
  bridgeMentions:
    "a hop on the way to the answer whose lead bridge has no document of its own reads the next bridge from the chunks that name the lead (\"Dunmore drummer Tobin Rusk\" in an album's document), before a runner-up's own document; such a chunk's own subject is no bridge",
  roleHolderDates:
    "a comparison by date of the options' role-holders (\"which film has the painter who is younger, X or Y?\") reads each holder's date from the holder's own document, not the option's; a holder with none is what the answer names as missing",
  answerFit:
    'a chain\'s answer must be of the kind its question asks for (a date, a number, one of the things a which-first question offers, a name the evidence uses as a place where a place is asked ("in Tenbury", not "the hosts Ada and Bo"), something the question does not already say, and not a word the evidence only uses to describe something else, "a Valdorian drama film"); otherwise the answer abstains',
  unfitLookup:
    'a planned last hop whose answer is not of the kind asked (`answerFit`: a company where "where" asks for a place, the competition where its city is asked) hands it on as a bridge: one more hop looks that answer up with the words still asked, where the chain has a hop left',
  pastPlanWords:
    'a hop past the hops the plan counted that looks up a name the chain read where another kind was asked (`unfitLookup`\'s competition where its city is asked, a hidden bridge\'s lead of the wrong kind) weighs the names in its documents by the question\'s words no earlier hop\'s document stated: those that led the chain to the thing ("the contest") sit beside its other names too ("the Tarnby Harp Contest (Velmari: …)")',
  compoundQuestions:
    'two questions joined by "and", the second about the first one\'s answer ("Who owns Project Beacon and which department is that person in?"), are asked in turn (the second with the first\'s answer in place of its pronoun) and the answer gives both',
  kindNames:
    'a later hop, sent to one entity\'s document, that asks "which <kind>" answers with the one name that document calls that kind ("in the Reliability department"), before any other name it reads',
  guessedBridgeFallback:
    'the hop a one-lookup question takes for a bridge its wording hid is a guess when the first hop\'s document left one word unexplained ("played" of "where was the final played?" against "the final in Porto"): a name the first hop\'s chunks that name everything the question names call the kind asked ("the Reliability department") is the answer; otherwise, where the guessed hop reads no answer of the kind asked, or none from chunks that state the unexplained word, the first hop\'s own reading is, if the question asks for a date, a number, a score or a place and the reading fits',
  neighbourReadings:
    "a first hop's date or number read from another entity's titled document (not the one the question names) stands only where that document states the relation asked: \"joined the company in 2027\", in a member's document, dates no founding",
  timeFrames:
    'a question whose time is set by another event ("X当天，Y做了什么？", "On the day X opened, …") hides no bridge in that event\'s words: its first hop is not followed by one more for them',
  jointJudgement:
    'a yes-or-no question about things it joins ("Are A and B both native to Velmar?", "…from the same country?") is judged from each thing\'s own document: the predicate\'s words each states, or a name their opening sentences share; a thing without its document leaves it unanswered',
  roleAsked:
    'a role that "who" asks for ("Who coaches…", "Who is the coach of…", "X的负责人是谁？", "谁是X的负责人？") is the answer\'s own relation, not a link to one more entity: it adds no hop to the plan',
  askedRole:
    'a question that asks for the holder of a role ("has a cousin called what", "who is the paternal grandmother of X") is answered only from a sentence that names the role beside the answer, even in the lead\'s own document; otherwise the chain is broken there and the answer abstains',
  statedChoice:
    'a choice not decided by dates ("Which wrestler was nicknamed the Iron Heron, A or B?") picks the option whose own document states the most of the words the question asks of it, before weighing the hops\' answers',
} as const;

export type ReasoningSwitch = keyof typeof REASONING_SWITCHES;

export const REASONING_SWITCH_NAMES = Object.keys(REASONING_SWITCHES) as ReasoningSwitch[];

/** Whether a switch is on: it is unless named among those switched off. */
export const isOn = (switchedOff: readonly ReasoningSwitch[] | undefined, name: ReasoningSwitch): boolean =>
  !switchedOff?.includes(name);
