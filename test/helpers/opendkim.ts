import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ensurePackage } from './processes.js';

export const OPENDKIM_TESTMSG = '/usr/sbin/opendkim-testmsg';

/** Installs Debian's opendkim-tools when opendkim-testmsg is missing (scripts/ensure-package.sh). */
export const ensureOpendkim = () => ensurePackage('opendkim-tools', OPENDKIM_TESTMSG);

/**
 * Verifies a message with OpenDKIM's `opendkim-testmsg`, which looks keys up in DNS: it runs in a
 * network and mount namespace of its own (unshare), where /etc/resolv.conf names 127.0.0.1 and
 * test/helpers/txt-dns-server.mjs answers the given TXT records. Nothing outside the namespace changes.
 * Answers opendkim-testmsg's exit code and what it printed (nothing when the signature verifies).
 */
export async function opendkimVerify(
  raw: string | Buffer,
  records: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'gas-opendkim-'));
  try {
    await writeFile(path.join(dir, 'message.eml'), raw);
    await writeFile(path.join(dir, 'records.json'), JSON.stringify(records));
    await writeFile(path.join(dir, 'resolv.conf'), 'nameserver 127.0.0.1\noptions attempts:1 timeout:2\n');
    const dns = path.join(import.meta.dirname, 'txt-dns-server.mjs');
    const script = [
      'set -e',
      'ip link set lo up',
      `mount --bind "${dir}/resolv.conf" /etc/resolv.conf`,
      `"${process.execPath}" "${dns}" "${dir}/records.json" > "${dir}/dns.out" 2>&1 &`,
      'dns=$!',
      `for i in $(seq 1 100); do grep -q ready "${dir}/dns.out" 2>/dev/null && break; sleep 0.05; done`,
      `grep -q ready "${dir}/dns.out" || { echo "the test DNS server did not start"; cat "${dir}/dns.out"; exit 99; }`,
      'set +e',
      `${OPENDKIM_TESTMSG} < "${dir}/message.eml"`,
      'code=$?',
      'kill $dns 2>/dev/null',
      'exit $code',
    ].join('\n');
    const out = spawnSync('unshare', ['--net', '--mount', '--fork', 'sh', '-c', script], { encoding: 'utf8', timeout: 30_000 });
    return { code: out.status, output: `${out.stdout}${out.stderr}`.trim() };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
