/**
 * A registry for tests: two providers; `acme-chat` offered by both, `acme-embed` by acme only (so acme
 * has two models); `acme-strict` whose variables are all required. Every constant and variable type
 * appears.
 */
export function registryFixture(): Record<string, any> {
  return {
    providers: [{ name: 'acme', displayName: 'ACME Corp' }, { name: 'globex' }],
    models: [
      {
        name: 'acme-chat',
        displayName: 'ACME Chat',
        providers: ['acme', 'globex'],
        createdAt: '2025-01-02T03:04:05+02:00',
        updatedAt: '2025-02-01T00:00:00Z',
        parameters: {
          constants: [
            { type: 'integer', name: 'contextWindow', value: 8192 },
            { type: 'number', name: 'pricePer1k', value: 0.5 },
            { type: 'string', name: 'family', value: 'chat' },
            { type: 'boolean', name: 'vision', value: true },
            { type: 'enum', name: 'modalities', value: ['text', 'image'] },
          ],
          variables: [
            { type: 'integer', name: 'max_tokens', min: 1, max: 4096, default: 256 },
            { type: 'number', name: 'temperature', min: 0, max: 2, default: 1, description: 'Sampling temperature' },
            { type: 'string', name: 'suffix', minLength: 1, maxLength: 8 },
            { type: 'boolean', name: 'logprobs', default: false },
            { type: 'enum', name: 'quality', values: ['low', 'high'], default: 'low' },
          ],
        },
      },
      {
        name: 'acme-embed',
        providers: ['acme'],
        createdAt: '2024-06-01T00:00:00Z',
        parameters: { constants: [{ type: 'integer', name: 'dimensions', value: 256 }], variables: [] },
      },
      {
        name: 'acme-strict',
        providers: ['acme'],
        parameters: {
          variables: [
            { type: 'integer', name: 'n', required: true },
            { type: 'number', name: 'top_p', required: true },
            { type: 'string', name: 'user', required: true },
            { type: 'boolean', name: 'echo', required: true },
            { type: 'enum', name: 'mode', values: ['a', 'b'], required: true },
          ],
        },
      },
    ],
  };
}
