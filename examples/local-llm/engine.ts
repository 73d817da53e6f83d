/**
 * A real LLM in process with node-llama-cpp: one model, one context with a few sequences (each
 * request takes one, waits while all are busy, and gives it back), chat turns rendered with the
 * model's own chat template, JSON schemas enforced by a grammar, and generation that stops when the
 * request's signal aborts. The prebuilt binary comes from npm; `build: 'never'` keeps node-llama-cpp
 * from ever compiling or downloading anything at run time.
 */
import {
  getLlama,
  LlamaChatSession,
  LlamaLogLevel,
  type ChatHistoryItem,
  type Llama,
  type LlamaContext,
  type LlamaGrammar,
  type LlamaModel,
} from 'node-llama-cpp';

export interface ChatTurn {
  readonly role: 'system' | 'user' | 'assistant';
  readonly text: string;
}

export interface GenerateOptions {
  readonly maxTokens: number;
  readonly temperature?: number;
  /** A JSON schema the answer must match (`response_format: json_schema`), or 'json' for any object. */
  readonly json?: Record<string, unknown> | 'json';
  readonly signal?: AbortSignal;
  /** Called with each piece of text as the model produces it. */
  readonly onText?: (text: string) => void;
}

export interface Generation {
  readonly text: string;
  readonly finishReason: 'stop' | 'length';
  readonly promptTokens: number;
  readonly completionTokens: number;
  /** The request's signal aborted before the model finished. */
  readonly cancelled: boolean;
}

export interface EngineOptions {
  readonly modelPath: string;
  /** CPU threads for generation; default 2. */
  readonly threads?: number;
  /** Requests generated at once; default 2. */
  readonly sequences?: number;
  /** Tokens of context per sequence; default 2048. */
  readonly contextSize?: number;
}

export class LocalLlmEngine {
  /** Requests generating now, and tokens generated since start (read by tests and the log). */
  readonly stats = { active: 0, generatedTokens: 0 };
  readonly #llama: Llama;
  readonly #model: LlamaModel;
  readonly #context: LlamaContext;
  #free: number;
  readonly #waiting: (() => void)[] = [];

  private constructor(llama: Llama, model: LlamaModel, context: LlamaContext, sequences: number) {
    this.#llama = llama;
    this.#model = model;
    this.#context = context;
    this.#free = sequences;
  }

  static async load(options: EngineOptions): Promise<LocalLlmEngine> {
    const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error });
    const model = await llama.loadModel({ modelPath: options.modelPath });
    const sequences = options.sequences ?? 2;
    const context = await model.createContext({ contextSize: options.contextSize ?? 2048, sequences, threads: options.threads ?? 2 });
    return new LocalLlmEngine(llama, model, context, sequences);
  }

  /** The model's answer to a conversation whose last turn is the user's. */
  async chat(turns: readonly ChatTurn[], options: GenerateOptions): Promise<Generation> {
    const last = turns.at(-1);
    if (!last || last.role !== 'user') throw new Error("the last message must be the user's");
    const grammar = await this.#grammar(options.json);
    await this.#acquire();
    const sequence = this.#context.getSequence();
    this.stats.active++;
    let completionTokens = 0;
    try {
      const session = new LlamaChatSession({ contextSequence: sequence, autoDisposeSequence: false });
      session.setChatHistory(history(turns.slice(0, -1)));
      const text = await session.prompt(last.text, {
        maxTokens: options.maxTokens,
        temperature: options.temperature,
        grammar,
        signal: options.signal,
        stopOnAbortSignal: true,
        onToken: (tokens) => {
          completionTokens += tokens.length;
          this.stats.generatedTokens += tokens.length;
        },
        onTextChunk: options.onText,
      });
      session.dispose({ disposeSequence: false });
      const { usedInputTokens } = sequence.tokenMeter;
      return {
        text,
        finishReason: completionTokens >= options.maxTokens ? 'length' : 'stop',
        promptTokens: usedInputTokens,
        completionTokens,
        cancelled: options.signal?.aborted === true,
      };
    } finally {
      this.stats.active--;
      sequence.dispose();
      this.#release();
    }
  }

  async close(): Promise<void> {
    await this.#context.dispose();
    await this.#model.dispose();
    await this.#llama.dispose();
  }

  async #grammar(json: GenerateOptions['json']): Promise<LlamaGrammar | undefined> {
    if (json === undefined) return undefined;
    if (json === 'json') return this.#llama.getGrammarFor('json');
    return this.#llama.createGrammarForJsonSchema(json as never);
  }

  async #acquire(): Promise<void> {
    if (this.#free > 0) {
      this.#free--;
      return;
    }
    await new Promise<void>((resolve) => this.#waiting.push(resolve));
  }

  #release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#free++;
  }
}

/** Earlier turns as node-llama-cpp's chat history (system prompts, user texts, model responses). */
function history(turns: readonly ChatTurn[]): ChatHistoryItem[] {
  return turns.map((turn): ChatHistoryItem => {
    if (turn.role === 'system') return { type: 'system', text: turn.text };
    if (turn.role === 'user') return { type: 'user', text: turn.text };
    return { type: 'model', response: [turn.text] };
  });
}
