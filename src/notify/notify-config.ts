import type { MuteTimeIntervalConfig, InhibitRuleConfig, RouteConfig } from './dispatch/route-schema.js';
import type { ReceiverConfig } from './receiver-schema.js';

/**
 * The slice of the configuration the notify stage reads, declared here so that notify depends on no
 * assembly above it; the loaded `Config` has this shape (config/ assembles it from notify's own schemas).
 */
export interface NotifyConfig {
  route?: RouteConfig | undefined;
  receivers: ReceiverConfig[];
  inhibit_rules: InhibitRuleConfig[];
  mute_time_intervals: MuteTimeIntervalConfig[];
  /** IANA zone in which times are shown to people. */
  display_timezone: string;
  server: {
    listen: string;
    /** Links in messages point here when set. */
    external_url?: string | undefined;
    max_silences: number;
    max_silence_size_bytes: number;
  };
}
