import { randomBytes } from 'node:crypto';

/** A Responses API id (`resp_…`, `msg_…`, `fc_…`): the prefix OpenAI uses and 24 random hex digits. */
export const newId = (prefix: 'resp' | 'msg' | 'fc' | 'fco' | 'rs' | 'ctc'): string => `${prefix}_${randomBytes(12).toString('hex')}`;
