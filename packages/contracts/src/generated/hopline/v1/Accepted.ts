// Original file: proto/hopline/v1/qa.proto


export interface Accepted {
}

export interface Accepted__Output {
}
