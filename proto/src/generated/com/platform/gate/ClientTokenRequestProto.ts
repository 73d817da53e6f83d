// Original file: gate.proto


export interface ClientTokenRequestProto {
}

export interface ClientTokenRequestProto__Output {
}
