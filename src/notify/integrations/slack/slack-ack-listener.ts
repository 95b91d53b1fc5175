import { z } from 'zod';
import type { Logger } from '../../../util/logger.js';
import { errorFields, errorMessage } from '../../../util/errors.js';
import { redactSecrets } from '../../../util/redact.js';
import { SLACK_ACK_ACTION } from './default-slack-template.js';

/** What a click on Slack's Acknowledge button asks of the daemon; the answer is said back to the person. */
export type SlackAcknowledge = (token: string, by: string) => Promise<string>;

/** The part of a Socket Mode client used here (@slack/socket-mode's SocketModeClient). */
interface SocketClient {
  on(event: 'interactive', listener: (e: { ack: (response?: Record<string, unknown>) => Promise<void>; body: unknown }) => void): unknown;
  start(): Promise<unknown>;
  disconnect(): Promise<void>;
}

/** One app's connection: the receivers that name its token share it. */
interface Connection {
  client: SocketClient;
  apiUrl: string;
}

const blockActions = z.object({
  type: z.literal('block_actions'),
  user: z.object({ id: z.string(), username: z.string().optional(), name: z.string().optional() }),
  actions: z.array(z.object({ action_id: z.string(), value: z.string().optional() })),
  response_url: z.string().optional(),
});

/**
 * Slack's Acknowledge button (contract 14): for each app token of the configured Slack receivers, a Socket Mode
 * connection (Slack's own SDK, @slack/socket-mode) on which the button's clicks arrive — an outgoing WebSocket, so
 * the daemon needs no public URL. A click carries the message's signed token (the value the button was sent with);
 * the daemon acknowledges the alerts it names that still fire, in the clicker's name, and says so to the channel's
 * thread of the message (its `response_url`). Every replica connects (Slack hands each click to one connection); the
 * ack is written where every replica reads it.
 */
export class SlackAckListeners {
  private readonly connections = new Map<string, Connection>();

  constructor(
    private readonly deps: {
      logger: Logger;
      acknowledge: SlackAcknowledge;
      /** Tests replace Slack's client; by default @slack/socket-mode's. */
      connect?: (appToken: string, apiUrl: string, logger: Logger) => Promise<SocketClient>;
    },
  ) {}

  /** Connect the app tokens configured now and close the ones no longer configured (start and every reload). */
  async update(apps: ReadonlyArray<{ appToken: string; apiUrl: string }>): Promise<void> {
    const wanted = new Map(apps.map((a) => [`${a.apiUrl}\u0000${a.appToken}`, a]));
    for (const [key, c] of this.connections) {
      if (wanted.has(key)) continue;
      this.connections.delete(key);
      await c.client.disconnect().catch(() => undefined);
    }
    for (const [key, app] of wanted) {
      if (this.connections.has(key)) continue;
      try {
        const client = await (this.deps.connect ?? socketModeClient)(app.appToken, app.apiUrl, this.deps.logger);
        client.on('interactive', (e) => void this.onInteractive(e, app.appToken));
        this.connections.set(key, { client, apiUrl: app.apiUrl });
        // The SDK reconnects by itself after a drop; a start that fails is said and tried again at the next reload.
        await client.start();
        this.deps.logger.info({ api: app.apiUrl }, "Slack Socket Mode connected: the messages' Acknowledge buttons work");
      } catch (err) {
        this.connections.delete(key);
        this.deps.logger.error({ api: app.apiUrl, err: { message: redactSecrets(errorMessage(err), [app.appToken]) } }, 'Slack Socket Mode could not connect: the Acknowledge buttons do nothing until it does (tried again at the next reload)');
      }
    }
  }

  async stop(): Promise<void> {
    await this.update([]);
  }

  private async onInteractive(e: { ack: (response?: Record<string, unknown>) => Promise<void>; body: unknown }, appToken: string): Promise<void> {
    // Slack wants the envelope acknowledged within 3 s, whatever comes of it.
    await e.ack().catch(() => undefined);
    const parsed = blockActions.safeParse(e.body);
    if (!parsed.success) return;
    const action = parsed.data.actions.find((a) => a.action_id === SLACK_ACK_ACTION);
    if (!action?.value) return;
    const user = parsed.data.user;
    const by = user.username ?? user.name ?? user.id;
    let said: string;
    try {
      said = await this.deps.acknowledge(action.value, by);
    } catch (err) {
      this.deps.logger.warn({ by, err: errorFields(err) }, 'an Acknowledge click from Slack could not be taken');
      said = `Not acknowledged: ${errorMessage(err)}`;
    }
    const url = parsed.data.response_url;
    if (url === undefined) return;
    try {
      // In the message's thread, for everyone in the channel: who has it.
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ replace_original: false, response_type: 'in_channel', text: `${said} (<@${user.id}>)` }),
        signal: AbortSignal.timeout(10_000),
      });
      await res.body?.cancel();
    } catch (err) {
      this.deps.logger.warn({ err: { message: redactSecrets(errorMessage(err), [appToken, url]) } }, "could not tell Slack's channel who acknowledged");
    }
  }
}

async function socketModeClient(appToken: string, apiUrl: string, logger: Logger): Promise<SocketClient> {
  // Loaded only when a Slack receiver has an app token.
  const { SocketModeClient, LogLevel } = await import('@slack/socket-mode');
  // The SDK's words in the daemon's log (JSON lines, not its console), warnings and errors only, the token never.
  const say = (level: 'warn' | 'error') => (...msg: unknown[]) => logger[level]({ component: 'slack-socket-mode' }, redactSecrets(msg.map((m) => (typeof m === 'string' ? m : errorMessage(m))).join(' '), [appToken]));
  const sdkLogger = {
    debug: () => undefined,
    info: () => undefined,
    warn: say('warn'),
    error: say('error'),
    setLevel: () => undefined,
    getLevel: () => LogLevel.WARN,
    setName: () => undefined,
  };
  return new SocketModeClient({ appToken, logger: sdkLogger, clientOptions: { slackApiUrl: apiUrl } }) as unknown as SocketClient;
}
