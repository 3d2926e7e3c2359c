import { isbot } from 'isbot';

/**
 * Mail security gateways and link previewers that follow links in mail before (or instead of) a
 * person, and whose user agents isbot 5.2 does not flag when they dress as a browser. Matched as
 * case-insensitive substrings. The one list of what counts apart as a `scanner_click`.
 */
const SCANNERS = [
  'barracuda', // Barracuda Sentinel / Email Security Gateway
  'mimecast', // Mimecast URL Protect
  'ppops', // Proofpoint URL Defense fetchers ("… ppops-<id>")
  'proofpoint',
  'microsoft office', // Office link previews and Safe Links' "Microsoft Office Existence Discovery"
  'ms-office',
  'msoffice',
  'safe links', // Microsoft Defender for Office 365 Safe Links
  'safelinks',
  'microsoft-cryptoapi', // Windows fetching a URL to check a certificate chain, not a person
  'symantec', // Symantec / Broadcom Email Security.cloud click-time protection
  'broadcom',
  'messagelabs',
  'ironport', // Cisco IronPort / Secure Email URL filtering
  'cisco',
  'trendmicro', // Trend Micro Email Security / InterScan
  'trend micro',
  'sophos',
  'fortinet',
  'forcepoint',
  'zscaler',
  'google-safety', // Gmail and Google's link safety checks
  'google-pagerenderer',
  'googleimageproxy',
  'slackbot', // chat link expanders
  'twitterbot',
  'facebookexternalhit',
  'linkedinbot',
  'discordbot',
  'whatsapp',
  'telegrambot',
  'skypeuripreview',
  'bingpreview',
  'headlesschrome',
] as const;

const SCANNER = new RegExp(SCANNERS.map((s) => s.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&')).join('|'), 'i');

/**
 * True when a request following a tracked link is not a person: a HEAD (link checkers probe without
 * reading), an empty or missing User-Agent, a UA isbot knows, or a mail scanner or previewer above.
 */
export function isScanner(method: string, userAgent: string | undefined): boolean {
  if (method === 'HEAD') return true;
  const ua = userAgent?.trim() ?? '';
  if (!ua) return true;
  return isbot(ua) || SCANNER.test(ua);
}
