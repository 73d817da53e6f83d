// Original file: gate.proto


export interface FitResponseProto {
}

export interface FitResponseProto__Output {
}
