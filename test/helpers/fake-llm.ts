import { createServer, type Server } from 'node:http';

export interface ChatRequest {
  headers: Record<string, string | string[] | undefined>;
  body: {
    model: string;
    messages: {
      role: string;
      content: string | null;
      tool_call_id?: string;
      tool_calls?: { id: string; function: { name: string; arguments: string } }[];
    }[];
    tools: { type: string; function: { name: string } }[];
  };
}

export interface Answer {
  status?: number;
  body?: unknown;
  delayMs?: number;
}

/** A scripted answer; a promise holds the request until the test settles it (an event, not a delay). */
export type Responder = (req: ChatRequest) => Answer | Promise<Answer>;

/**
 * A local HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions protocol
 * (`POST /v1/chat/completions`). Each request takes the next scripted responder (the last one repeats).
 */
export async function startFakeLlm(): Promise<{
  baseUrl: string;
  requests: ChatRequest[];
  script(...responders: Responder[]): void;
  close(): Promise<void>;
}> {
  const requests: ChatRequest[] = [];
  let responders: Responder[] = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += d));
    req.on('end', async () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404).end();
        return;
      }
      const request: ChatRequest = { headers: req.headers, body: JSON.parse(raw) as ChatRequest['body'] };
      requests.push(request);
      const responder = responders.length > 1 ? responders.shift()! : responders[0];
      const out = responder ? await responder(request) : { status: 500, body: { error: 'no script' } };
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(out.status ?? 200, { 'content-type': 'application/json' }).end(JSON.stringify(out.body ?? {}));
      };
      if (out.delayMs) setTimeout(send, out.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    script(...r) {
      responders = r;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A chat-completions answer with plain content and/or tool calls. */
export function completion(content: string | null, toolCalls: { id: string; name: string; args: unknown }[] = []) {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion',
    choices: [
      {
        index: 0,
        finish_reason: toolCalls.length ? 'tool_calls' : 'stop',
        message: {
          role: 'assistant',
          content,
          ...(toolCalls.length
            ? {
                tool_calls: toolCalls.map((c) => ({
                  id: c.id,
                  type: 'function',
                  function: { name: c.name, arguments: JSON.stringify(c.args) },
                })),
              }
            : {}),
        },
      },
    ],
  };
}

/**
 * The environment of the `llm` brain pointed at a stand-in from startFakeLlm (one try, a 5 s timeout, a test
 * key and model), with a file's own settings on top.
 */
export const llmEnv = (llm: { baseUrl: string }, more: Record<string, string> = {}): Record<string, string> => ({
  AGENT_BRAIN: 'llm',
  LLM_BASE_URL: llm.baseUrl,
  LLM_API_KEY: 'sk-test',
  LLM_MODEL: 'test-model',
  LLM_TIMEOUT_MS: '5000',
  LLM_MAX_RETRIES: '0',
  ...more,
});

/** The scripted model server the `llm` fixture gives a test. */
export type FakeLlm = Awaited<ReturnType<typeof startFakeLlm>>;
