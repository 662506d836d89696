// Original file: proto/hopline/v1/qa.proto

import type { Analysis as _hopline_v1_Analysis, Analysis__Output as _hopline_v1_Analysis__Output } from '../../hopline/v1/Analysis.js';
import type { HopStarted as _hopline_v1_HopStarted, HopStarted__Output as _hopline_v1_HopStarted__Output } from '../../hopline/v1/HopStarted.js';
import type { RetrievalEvent as _hopline_v1_RetrievalEvent, RetrievalEvent__Output as _hopline_v1_RetrievalEvent__Output } from '../../hopline/v1/RetrievalEvent.js';
import type { HopAnswer as _hopline_v1_HopAnswer, HopAnswer__Output as _hopline_v1_HopAnswer__Output } from '../../hopline/v1/HopAnswer.js';
import type { TokenEvent as _hopline_v1_TokenEvent, TokenEvent__Output as _hopline_v1_TokenEvent__Output } from '../../hopline/v1/TokenEvent.js';
import type { CitationsEvent as _hopline_v1_CitationsEvent, CitationsEvent__Output as _hopline_v1_CitationsEvent__Output } from '../../hopline/v1/CitationsEvent.js';
import type { Done as _hopline_v1_Done, Done__Output as _hopline_v1_Done__Output } from '../../hopline/v1/Done.js';
import type { ErrorEvent as _hopline_v1_ErrorEvent, ErrorEvent__Output as _hopline_v1_ErrorEvent__Output } from '../../hopline/v1/ErrorEvent.js';
import type { Accepted as _hopline_v1_Accepted, Accepted__Output as _hopline_v1_Accepted__Output } from '../../hopline/v1/Accepted.js';
import type { Restarted as _hopline_v1_Restarted, Restarted__Output as _hopline_v1_Restarted__Output } from '../../hopline/v1/Restarted.js';
import type { Long } from '@grpc/proto-loader';

export interface QaEvent {
  'questionId'?: (string);
  'seq'?: (number);
  'atUnixMs'?: (number | string | Long);
  'attempt'?: (number);
  'route'?: (_hopline_v1_Analysis | null);
  'hopStarted'?: (_hopline_v1_HopStarted | null);
  'retrieval'?: (_hopline_v1_RetrievalEvent | null);
  'hopAnswer'?: (_hopline_v1_HopAnswer | null);
  'token'?: (_hopline_v1_TokenEvent | null);
  'citations'?: (_hopline_v1_CitationsEvent | null);
  'done'?: (_hopline_v1_Done | null);
  'error'?: (_hopline_v1_ErrorEvent | null);
  'accepted'?: (_hopline_v1_Accepted | null);
  'restarted'?: (_hopline_v1_Restarted | null);
  'event'?: "route"|"hopStarted"|"retrieval"|"hopAnswer"|"token"|"citations"|"done"|"error"|"accepted"|"restarted";
}

export interface QaEvent__Output {
  'questionId': (string);
  'seq': (number);
  'atUnixMs': (number);
  'attempt': (number);
  'route'?: (_hopline_v1_Analysis__Output | null);
  'hopStarted'?: (_hopline_v1_HopStarted__Output | null);
  'retrieval'?: (_hopline_v1_RetrievalEvent__Output | null);
  'hopAnswer'?: (_hopline_v1_HopAnswer__Output | null);
  'token'?: (_hopline_v1_TokenEvent__Output | null);
  'citations'?: (_hopline_v1_CitationsEvent__Output | null);
  'done'?: (_hopline_v1_Done__Output | null);
  'error'?: (_hopline_v1_ErrorEvent__Output | null);
  'accepted'?: (_hopline_v1_Accepted__Output | null);
  'restarted'?: (_hopline_v1_Restarted__Output | null);
  'event'?: "route"|"hopStarted"|"retrieval"|"hopAnswer"|"token"|"citations"|"done"|"error"|"accepted"|"restarted";
}
