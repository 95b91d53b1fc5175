/** What config.example.yaml reads from the environment (its header lists them); values are placeholders. */
export const EXAMPLE_ENV: Record<string, string> = {
  MFT_USER: 'transfer-watch',
  MFT_PASSWORD: 'example-mft-password',
  SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/T000/B000/XXXX',
  SMTP_PASSWORD: 'example-smtp-password',
  WEBHOOK_URL: 'https://hooks.example.com/transfer-watch',
  WEBHOOK_TOKEN: 'example-token',
};
