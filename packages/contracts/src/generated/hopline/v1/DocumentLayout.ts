// Original file: proto/hopline/v1/retrieval.proto

import type { DocumentSection as _hopline_v1_DocumentSection, DocumentSection__Output as _hopline_v1_DocumentSection__Output } from '../../hopline/v1/DocumentSection.js';

export interface DocumentLayout {
  'sections'?: (_hopline_v1_DocumentSection)[];
}

export interface DocumentLayout__Output {
  'sections': (_hopline_v1_DocumentSection__Output)[];
}
