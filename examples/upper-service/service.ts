/**
 * The smallest useful model service, and the one the docs' first examples call (`demo/upper`):
 * plain JSON predict `{"text": …}` → `{"upper": …}`, a streamed answer when asked for one, and an
 * `ext` method. docs/model-service.md walks through it line by line.
 */
import { ServiceError, type ModelHandlers } from '../../sdk/index.js';

interface UpperRequest {
  text?: unknown;
  /** Ask for the answer word by word, as a stream of partial answers. */
  stream?: unknown;
}

const words = (text: string): string[] => text.split(/\s+/).filter(Boolean);

export const upperHandlers: ModelHandlers = {
  predict(request) {
    const { text, stream } = request.data.json<UpperRequest>() ?? {}; // unreadable JSON → 400 for the caller
    if (typeof text !== 'string' || !text) throw ServiceError.badRequest('send {"text": "<some text>"}');
    if (stream === true)
      return (async function* () {
        for (const word of words(text)) yield { word: word.toUpperCase() };
      })();
    return { upper: text.toUpperCase() };
  },
  ext(methodName, params) {
    // params: each the caller's text, as sent
    if (methodName === 'info') return { name: 'upper', methods: ['info', 'count'], params };
    if (methodName === 'count') return { words: words(params.text ?? '').length };
    throw ServiceError.badRequest(`unknown ext method '${methodName}': try info or count`);
  },
};
