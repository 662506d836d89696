export type { ChatMessage, ChatModel, ChatRequest, ChatResult, ChatUsage, JsonChatRequest } from './chat/chat-model.js';
export { addUsage, NO_USAGE } from './chat/chat-model.js';
export { ModelOutputError, parseJsonReply, describeSchema } from './chat/json-reply.js';
export type { JsonReply } from './chat/json-reply.js';
export { createOpenAiChatModel } from './chat/openai-chat-model.js';
export type { CallGuard, OpenAiChatModelOptions } from './chat/openai-chat-model.js';
export { fenceEvidence, promptMessages, renderPrompt } from './prompts.js';
export type { FencedEvidence, PromptName } from './prompts.js';
export type {
  EvidenceItem,
  HopExtractionInput,
  HopFinding,
  ModelCallContext,
  PreviousHop,
  Reasoner,
  SynthesisHop,
  SynthesisInput,
} from './reasoner/reasoner.js';
export { createModelReasoner } from './reasoner/model-reasoner.js';
export type { ModelReasonerOptions } from './reasoner/model-reasoner.js';
export { createOfflineReasoner } from './offline/offline-reasoner.js';
export type { OfflineReasonerOptions } from './offline/offline-reasoner.js';
export { gradeEvidence } from './offline/grade.js';
export {
  answerType,
  choiceOptions,
  chineseComparisonOptions,
  questionAnchors,
  relationTerms,
  sameEntity,
} from './offline/question.js';
export type { AnswerType } from './offline/question.js';
export { isRoleNoun, ROLE_NOUNS } from './offline/relations.js';
export { bareTitle, contentTerms, entityKey, namedSpans, states } from './offline/text.js';
export { claimPhrases } from './offline/claims.js';
export { BudgetExhaustedError, UsageMeter } from './usage.js';
export type { UsageLimits } from './usage.js';
