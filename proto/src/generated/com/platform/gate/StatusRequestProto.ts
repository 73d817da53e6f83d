// Original file: gate.proto


export interface StatusRequestProto {
}

export interface StatusRequestProto__Output {
}
