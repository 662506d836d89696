// Original file: proto/hopline/v1/answer_gateway.proto


export interface ListKbsRequest {
}

export interface ListKbsRequest__Output {
}
