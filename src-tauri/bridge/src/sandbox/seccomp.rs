//! The sandboxed server's system-call filter (seccomp, built by `seccompiler`, loaded in the
//! forked child right before it execs the server, or bubblewrap in that mode). Refused with
//! EPERM unless said otherwise:
//! - a system call of another ABI: an x32 one (`nr | 0x40000000` with x86_64's arch value,
//!   which seccompiler never checks, rust-vmm/seccompiler#74: a hand-written prefix, [`abi`])
//!   and, by seccompiler's own arch check, an i386 one (`int 0x80`), which kills the process;
//! - `socket()` but as `AF_INET`/`AF_INET6`, `SOCK_STREAM`/`SOCK_DGRAM` and protocol 0, TCP or
//!   UDP: no UNIX socket (so no socket outside the sandbox is reachable, by path or in the
//!   abstract namespace), no MPTCP and no SCTP (Landlock's TCP rules do not see them), no raw,
//!   packet, ping or netlink socket but rtnetlink ([`Sockets::Inet`]: it reads the interfaces,
//!   and bubblewrap brings up `lo` through it under the filter). With no network of its own
//!   ([`Sockets::None`]: Landlock's `sandbox_network = "none"`) no socket at all;
//! - TCP Fast Open's implicit connect (`sendto`/`sendmsg`/`sendmmsg` with `MSG_FASTOPEN`),
//!   which skips the LSM hook of `connect()` where Landlock checks its connect rule.
//!   `TCP_FASTOPEN_CONNECT` needs no rule: with it the connection is still made by
//!   `connect()`, which passes the hook (`__sys_connect_file` calls `security_socket_connect`
//!   before the protocol's connect);
//! - io_uring, whose requests do not pass through the filter;
//! - typing into a terminal (`ioctl` `TIOCSTI`, `TIOCLINUX`);
//! - `socketpair()` but as `AF_UNIX` stream or seqpacket pairs (how Node and Python talk to
//!   their own children): a datagram pair (`SOCK_DGRAM`, or `SOCK_RAW`, which AF_UNIX makes a
//!   datagram socket) can be re-pointed at a host's datagram socket by `connect()` or
//!   `sendto()` to a path; a connected stream pair cannot (EISCONN).
//!
//! The x32 prefix has no kernel here to run on: the unit tests below evaluate the compiled
//! program on crafted `seccomp_data` with a small classic-BPF interpreter.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use warden_config::network::Network;

/// Which sockets the server may create.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sockets {
    /// None at all: `sandbox_network = "none"` where no namespace of its own cuts the network
    /// (Landlock).
    None,
    /// TCP and UDP over IPv4 and IPv6, and rtnetlink (`AF_NETLINK`, protocol `NETLINK_ROUTE`):
    /// the host's network, a list's proxy, or bubblewrap's own network namespace, which
    /// bubblewrap sets up through rtnetlink under the filter. rtnetlink reads the interfaces
    /// (Node's `os.networkInterfaces()`, glibc's `getaddrinfo`); changing them needs
    /// `CAP_NET_ADMIN` over the network's namespace, which the server never has.
    Inet,
    /// [`Sockets::Inet`] but TCP only, and no listener: a `sandbox_network` list where no
    /// namespace of its own holds the server (Landlock), whose only way out is the proxy's TCP
    /// port. Landlock's rules cut neither UDP (and DNS with it) nor a `listen()` that binds
    /// a port by itself; bubblewrap's empty namespace cuts both.
    Proxy,
}

impl Sockets {
    /// The sockets for `network`, `namespaced` when bubblewrap gives the server a network
    /// namespace of its own (it does unless the network is the host's).
    pub fn of(network: &Network, namespaced: bool) -> Sockets {
        match network {
            Network::None if !namespaced => Sockets::None,
            Network::Only(_) if !namespaced => Sockets::Proxy,
            _ => Sockets::Inet,
        }
    }
}

/// The filter, compiled before the fork and loaded in the child.
pub struct Filter(BpfProgram);

/// Refusals: the action of a matching rule.
const REFUSED: SeccompAction = SeccompAction::Errno(libc::EPERM as u32);

impl Filter {
    pub fn new(sockets: Sockets) -> Result<Filter, String> {
        Ok(Filter(program(sockets)?))
    }

    /// Loads the filter on this thread (in the forked child, before exec): two system calls.
    pub fn apply(&self) -> std::io::Result<()> {
        seccompiler::apply_filter(&self.0)
            .map_err(|_| std::io::Error::from_raw_os_error(libc::EPERM))
    }
}

fn program(sockets: Sockets) -> Result<BpfProgram, String> {
    let arch = if cfg!(target_arch = "x86_64") {
        TargetArch::x86_64
    } else if cfg!(target_arch = "aarch64") {
        TargetArch::aarch64
    } else if cfg!(target_arch = "riscv64") {
        TargetArch::riscv64
    } else {
        return Err(format!("no filter for {}", std::env::consts::ARCH));
    };
    // seccompiler's rules say what is refused (its match action); the rest is allowed.
    let filter = SeccompFilter::new(rules(sockets)?, SeccompAction::Allow, REFUSED, arch)
        .map_err(|e| e.to_string())?;
    let body = BpfProgram::try_from(filter).map_err(|e| e.to_string())?;
    let mut program = abi::prefix();
    program.extend(body);
    Ok(program)
}

/// A condition on the low 32 bits of argument `arg` (every argument ruled on is an `int`,
/// which the kernel truncates to those bits as well).
fn arg(arg: u8, op: SeccompCmpOp, value: libc::c_int) -> Result<SeccompCondition, String> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value as u32 as u64)
        .map_err(|e| e.to_string())
}

/// `(arg & mask) == value`.
fn masked(a: u8, mask: libc::c_int, value: libc::c_int) -> Result<SeccompCondition, String> {
    arg(a, SeccompCmpOp::MaskedEq(mask as u32 as u64), value)
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, String> {
    SeccompRule::new(conditions).map_err(|e| e.to_string())
}

/// The refusing rules, by system call: a call matching any of its rules (all of a rule's
/// conditions) is refused; a call with no rules is refused whatever its arguments.
fn rules(sockets: Sockets) -> Result<BTreeMap<i64, Vec<SeccompRule>>, String> {
    use SeccompCmpOp::{Eq, Ne};
    // The socket type's low four bits (SOCK_TYPE_MASK; above them SOCK_NONBLOCK and
    // SOCK_CLOEXEC) are SOCK_STREAM (1) or SOCK_DGRAM (2), refused otherwise: 0, 3 (both low
    // bits), or bit 2 or 3 set.
    let not_stream_or_dgram = |skip: &[SeccompCondition]| -> Result<Vec<SeccompRule>, String> {
        [(0xf, 0), (0x3, 0x3), (0x4, 0x4), (0x8, 0x8)]
            .into_iter()
            .map(|(mask, value)| {
                let mut c = skip.to_vec();
                c.push(masked(1, mask, value)?);
                rule(c)
            })
            .collect()
    };
    let proto = |skip: &[SeccompCondition]| -> Result<SeccompRule, String> {
        let mut c = skip.to_vec();
        for p in [0, libc::IPPROTO_TCP, libc::IPPROTO_UDP] {
            c.push(arg(2, Ne, p)?);
        }
        rule(c)
    };
    let socket = match sockets {
        Sockets::None => Vec::new(),
        Sockets::Inet | Sockets::Proxy => {
            let inet = [arg(0, Ne, libc::AF_NETLINK)?];
            let netlink = arg(0, Eq, libc::AF_NETLINK)?;
            let mut r = vec![rule(vec![
                arg(0, Ne, libc::AF_INET)?,
                arg(0, Ne, libc::AF_INET6)?,
                arg(0, Ne, libc::AF_NETLINK)?,
            ])?];
            r.extend(not_stream_or_dgram(&inet)?);
            r.push(proto(&inet)?);
            // rtnetlink as SOCK_RAW (3) or SOCK_DGRAM (2): `type & 0xe == 2`.
            for (mask, value) in [(0x2, 0), (0x4, 0x4), (0x8, 0x8)] {
                r.push(rule(vec![netlink.clone(), masked(1, mask, value)?])?);
            }
            r.push(rule(vec![netlink, arg(2, Ne, libc::NETLINK_ROUTE)?])?);
            if sockets == Sockets::Proxy {
                r.push(rule(vec![
                    arg(0, Ne, libc::AF_NETLINK)?,
                    masked(1, 0xf, libc::SOCK_DGRAM)?,
                ])?);
            }
            r
        }
    };
    // Pairs: AF_UNIX, SOCK_STREAM (1) or SOCK_SEQPACKET (5): `type & 0xb == 1`.
    let mut socketpair = vec![rule(vec![arg(0, Ne, libc::AF_UNIX)?])?];
    for (mask, value) in [(0x1, 0), (0x2, 0x2), (0x8, 0x8)] {
        socketpair.push(rule(vec![masked(1, mask, value)?])?);
    }
    let fast_open = |flags: u8| -> Result<Vec<SeccompRule>, String> {
        Ok(vec![rule(vec![masked(
            flags,
            libc::MSG_FASTOPEN,
            libc::MSG_FASTOPEN,
        )?])?])
    };
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = [
        (libc::SYS_socket, socket),
        (libc::SYS_socketpair, socketpair),
        (libc::SYS_sendto, fast_open(3)?),
        (libc::SYS_sendmsg, fast_open(2)?),
        (libc::SYS_sendmmsg, fast_open(3)?),
        // Typing into a terminal (`TIOCSTI`) or a console (`TIOCLINUX`): a server that shares
        // the client's controlling terminal (Landlock, or the client run in a shell) could
        // type a command into the user's shell.
        (
            libc::SYS_ioctl,
            vec![
                rule(vec![arg(1, Eq, libc::TIOCSTI as libc::c_int)?])?,
                rule(vec![arg(1, Eq, libc::TIOCLINUX as libc::c_int)?])?,
            ],
        ),
        // The kernel's keyrings (Kerberos tickets, ecryptfs and AFS tokens live there, and
        // the session keyring is the client's), and kernel facilities no server needs.
        (libc::SYS_keyctl, Vec::new()),
        (libc::SYS_add_key, Vec::new()),
        (libc::SYS_request_key, Vec::new()),
        (libc::SYS_bpf, Vec::new()),
        (libc::SYS_userfaultfd, Vec::new()),
        (libc::SYS_perf_event_open, Vec::new()),
        (libc::SYS_io_uring_setup, Vec::new()),
        (libc::SYS_io_uring_enter, Vec::new()),
        (libc::SYS_io_uring_register, Vec::new()),
    ]
    .into_iter()
    .collect();
    if sockets == Sockets::Proxy {
        // `listen()` binds a port of its own when the socket has none, past Landlock's bind
        // rule.
        rules.insert(libc::SYS_listen, Vec::new());
    }
    Ok(rules)
}

/// The hand-written prefix for other ABIs than the filter's own (x86_64 only).
///
/// On x86_64 an x32 system call carries x86_64's arch value (`AUDIT_ARCH_X86_64`) and its
/// number with bit 30 set (`__X32_SYSCALL_BIT`, 0x40000000): seccompiler's program checks the
/// arch, then compares the number with the 64-bit table's, finds no match and allows it. The
/// prefix refuses every number at or above that bit before seccompiler's program runs. Classic
/// BPF jumps are relative (to the next instruction) and seccompiler's program begins by
/// loading what it compares, so it runs unchanged behind the prefix.
///
/// Refused with EPERM rather than killed: no x86_64 program makes such calls on purpose but by
/// mistake (`syscall(-1)` is one of them, ENOSYS without the filter), and a refusal is what
/// every other rule of the filter gives; the call is not made either way. i386 calls
/// (`int 0x80`, AUDIT_ARCH_I386) are killed by seccompiler's arch check that follows.
mod abi {
    use super::*;

    /// `__X32_SYSCALL_BIT`.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub const X32_BIT: u32 = 0x4000_0000;

    #[cfg(target_arch = "x86_64")]
    pub fn prefix() -> BpfProgram {
        use libc::{BPF_ABS, BPF_JGE, BPF_JMP, BPF_K, BPF_LD, BPF_RET, BPF_W};
        use seccompiler::sock_filter;
        let op = |code: u32, jt, jf, k| sock_filter {
            code: code as u16,
            jt,
            jf,
            k,
        };
        vec![
            // A = seccomp_data.nr (offset 0)
            op(BPF_LD | BPF_W | BPF_ABS, 0, 0, 0),
            // if A >= X32_BIT: next, else skip it
            op(BPF_JMP | BPF_JGE | BPF_K, 0, 1, X32_BIT),
            op(BPF_RET | BPF_K, 0, 0, u32::from(REFUSED)),
        ]
    }

    #[cfg(not(target_arch = "x86_64"))]
    pub fn prefix() -> BpfProgram {
        Vec::new()
    }
}

/// The compiled program, evaluated on crafted `seccomp_data` by a classic-BPF interpreter of
/// the instructions seccompiler and the prefix emit: the only cover of the x32 and i386 rules,
/// which this kernel cannot run (x32 is off in most kernels; i386 needs a 32-bit binary).
#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use libc::{
        AF_INET, AF_INET6, AF_NETLINK, AF_PACKET, AF_UNIX, BPF_ABS, BPF_ALU, BPF_AND, BPF_JA,
        BPF_JEQ, BPF_JGE, BPF_JGT, BPF_JMP, BPF_K, BPF_LD, BPF_RET, BPF_W, IPPROTO_ICMP,
        IPPROTO_MPTCP, IPPROTO_SCTP, IPPROTO_TCP, IPPROTO_UDP, MSG_FASTOPEN, MSG_NOSIGNAL,
        NETLINK_KOBJECT_UEVENT, NETLINK_ROUTE, SOCK_CLOEXEC, SOCK_DGRAM, SOCK_NONBLOCK, SOCK_RAW,
        SOCK_SEQPACKET, SOCK_STREAM,
    };
    use seccompiler::sock_filter;

    /// A system call: a name for the report, its number, its arch value and its arguments.
    type Call<'a> = (&'a str, i64, u32, &'a [i64]);
    /// The same, its arguments its own.
    type OwnedCall = (&'static str, i64, u32, Vec<i64>);

    const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;
    const EPERM: u32 = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
    const KILL: u32 = libc::SECCOMP_RET_KILL_PROCESS;

    #[cfg(target_arch = "x86_64")]
    const ARCH: u32 = 0xc000_003e; // AUDIT_ARCH_X86_64
    #[cfg(target_arch = "aarch64")]
    const ARCH: u32 = 0xc000_00b7; // AUDIT_ARCH_AARCH64
    #[cfg(target_arch = "riscv64")]
    const ARCH: u32 = 0xc000_00f3; // AUDIT_ARCH_RISCV64
    const AUDIT_ARCH_I386: u32 = 0x4000_0003;

    /// `struct seccomp_data`: nr, arch, instruction_pointer, args[6], in native byte order
    /// (as the kernel hands it to the filter).
    fn data(nr: u32, arch: u32, args: &[i64]) -> [u8; 64] {
        let mut d = [0u8; 64];
        d[0..4].copy_from_slice(&nr.to_ne_bytes());
        d[4..8].copy_from_slice(&arch.to_ne_bytes());
        for (i, a) in args.iter().enumerate() {
            d[16 + 8 * i..24 + 8 * i].copy_from_slice(&a.to_ne_bytes());
        }
        d
    }

    /// Checks what the kernel checks of a seccomp program (jumps in range, aligned loads
    /// inside `seccomp_data`, a return at the end) and runs it on `data`.
    fn run(program: &[sock_filter], data: &[u8; 64]) -> u32 {
        assert!(!program.is_empty() && program.len() <= 4096);
        let mut a: u32 = 0;
        let mut pc = 0usize;
        loop {
            let i = &program[pc];
            pc += 1;
            let k = i.k;
            let jump = |pc: usize, by: u32| {
                let to = pc + by as usize;
                assert!(to < program.len(), "a jump out of the program at {pc}");
                to
            };
            match u32::from(i.code) {
                c if c == BPF_LD | BPF_W | BPF_ABS => {
                    let at = k as usize;
                    assert!(at.is_multiple_of(4) && at + 4 <= data.len(), "load at {at}");
                    a = u32::from_ne_bytes(data[at..at + 4].try_into().unwrap());
                }
                c if c == BPF_ALU | BPF_AND | BPF_K => a &= k,
                c if c == BPF_JMP | BPF_JA => pc = jump(pc, k),
                c if c == BPF_JMP | BPF_JEQ | BPF_K => {
                    pc = jump(pc, u32::from(if a == k { i.jt } else { i.jf }))
                }
                c if c == BPF_JMP | BPF_JGT | BPF_K => {
                    pc = jump(pc, u32::from(if a > k { i.jt } else { i.jf }))
                }
                c if c == BPF_JMP | BPF_JGE | BPF_K => {
                    pc = jump(pc, u32::from(if a >= k { i.jt } else { i.jf }))
                }
                c if c == BPF_RET | BPF_K => return k,
                c => panic!("an instruction the interpreter does not know: {c:#x}"),
            }
        }
    }

    /// What the filter for `sockets` does with each call: `(name, nr, arch, args)`.
    fn verdicts(sockets: Sockets, calls: &[Call]) -> Vec<(String, u32)> {
        let program = program(sockets).unwrap();
        calls
            .iter()
            .map(|(name, nr, arch, args)| {
                let nr = u32::try_from(*nr).unwrap();
                ((*name).to_owned(), run(&program, &data(nr, *arch, args)))
            })
            .collect()
    }

    fn expect(cases: &[(&str, u32)]) -> Vec<(String, u32)> {
        cases.iter().map(|(n, v)| ((*n).to_owned(), *v)).collect()
    }

    const ALL: [Sockets; 3] = [Sockets::None, Sockets::Inet, Sockets::Proxy];
    const S: i64 = libc::SYS_socket;

    /// x32 is refused by the prefix, and seccompiler's program alone would let it through
    /// (what the prefix is for).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn x32_calls_are_refused() {
        let x32 = i64::from(abi::X32_BIT);
        let calls: &[Call] = &[
            (
                "x32 socket(AF_UNIX)",
                x32 | S,
                ARCH,
                &[AF_UNIX.into(), SOCK_STREAM.into()],
            ),
            (
                "x32 socket(AF_INET)",
                x32 | S,
                ARCH,
                &[AF_INET.into(), SOCK_STREAM.into()],
            ),
            ("x32 read", x32, ARCH, &[]),
            ("syscall(-1)", 0xffff_ffff, ARCH, &[]),
        ];
        for sockets in ALL {
            let got = verdicts(sockets, calls);
            let want: Vec<(String, u32)> = calls.iter().map(|c| (c.0.to_owned(), EPERM)).collect();
            assert_eq!(got, want, "{sockets:?}");
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn without_the_prefix_seccompiler_lets_x32_through() {
        let program = program(Sockets::None).unwrap();
        let unix = data(
            abi::X32_BIT | 41,
            ARCH,
            &[AF_UNIX.into(), SOCK_STREAM.into()],
        );
        assert_eq!(run(&program[abi::prefix().len()..], &unix), ALLOW);
    }

    /// i386 (`int 0x80`): `socketcall` (102) and `socket` (359) of its table kill the process.
    #[test]
    fn i386_calls_kill() {
        let calls: &[Call] = &[
            ("i386 socketcall(SYS_SOCKET)", 102, AUDIT_ARCH_I386, &[1, 0]),
            (
                "i386 socket(AF_UNIX)",
                359,
                AUDIT_ARCH_I386,
                &[AF_UNIX.into(), 1, 0],
            ),
            ("i386 read", 3, AUDIT_ARCH_I386, &[]),
        ];
        for sockets in ALL {
            let want: Vec<(String, u32)> = calls.iter().map(|c| (c.0.to_owned(), KILL)).collect();
            assert_eq!(verdicts(sockets, calls), want, "{sockets:?}");
        }
    }

    fn socket(name: &'static str, domain: i32, ty: i32, proto: i32) -> OwnedCall {
        (name, S, ARCH, vec![domain.into(), ty.into(), proto.into()])
    }

    /// Every socket() the filter is asked about, with its verdict under `Inet`, `None` and
    /// `Proxy`.
    fn socket_cases() -> Vec<(OwnedCall, [u32; 3])> {
        let both = [ALLOW, EPERM, ALLOW];
        let never = [EPERM, EPERM, EPERM];
        let netns = both;
        let udp = [ALLOW, EPERM, EPERM];
        vec![
            (socket("tcp", AF_INET, SOCK_STREAM, 0), both),
            (
                socket(
                    "tcp flags",
                    AF_INET,
                    SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
                    IPPROTO_TCP,
                ),
                both,
            ),
            (
                socket("udp6", AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP),
                udp,
            ),
            (socket("udp", AF_INET, SOCK_DGRAM, 0), udp),
            (socket("mptcp", AF_INET, SOCK_STREAM, IPPROTO_MPTCP), never),
            (
                socket(
                    "mptcp6",
                    AF_INET6,
                    SOCK_STREAM | SOCK_CLOEXEC,
                    IPPROTO_MPTCP,
                ),
                never,
            ),
            (socket("sctp", AF_INET, SOCK_STREAM, IPPROTO_SCTP), never),
            (
                socket("sctp seqpacket", AF_INET, SOCK_SEQPACKET, IPPROTO_SCTP),
                never,
            ),
            (socket("raw", AF_INET, SOCK_RAW, IPPROTO_TCP), never),
            (socket("raw icmp", AF_INET, SOCK_RAW, IPPROTO_ICMP), never),
            (socket("ping", AF_INET, SOCK_DGRAM, IPPROTO_ICMP), never),
            (socket("type 0", AF_INET, 0, 0), never),
            (socket("type 10 (SOCK_PACKET)", AF_INET, 10, 0), never),
            (socket("unix", AF_UNIX, SOCK_STREAM, 0), never),
            (
                socket("unix dgram cloexec", AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0),
                never,
            ),
            (socket("packet", AF_PACKET, SOCK_RAW, 0x0300), never),
            (
                socket(
                    "netlink route",
                    AF_NETLINK,
                    SOCK_RAW | SOCK_CLOEXEC,
                    NETLINK_ROUTE,
                ),
                netns,
            ),
            (
                socket("netlink route dgram", AF_NETLINK, SOCK_DGRAM, NETLINK_ROUTE),
                netns,
            ),
            (
                socket(
                    "netlink uevent",
                    AF_NETLINK,
                    SOCK_RAW,
                    NETLINK_KOBJECT_UEVENT,
                ),
                never,
            ),
            (
                socket("netlink stream", AF_NETLINK, SOCK_STREAM, NETLINK_ROUTE),
                never,
            ),
            (
                socket("netlink tcp", AF_NETLINK, SOCK_RAW, IPPROTO_TCP),
                never,
            ),
            (
                socket("domain 2^32+AF_UNIX", AF_UNIX, SOCK_STREAM, 0),
                never,
            ),
        ]
    }

    #[test]
    fn sockets_are_tcp_or_udp_over_ip_and_none_under_none() {
        let mut cases = socket_cases();
        // The kernel takes the domain as an int: the high half of the register is ignored,
        // by the kernel and by the filter alike.
        cases.last_mut().unwrap().0.3[0] |= 1 << 32;
        for (i, sockets) in [Sockets::Inet, Sockets::None, Sockets::Proxy]
            .into_iter()
            .enumerate()
        {
            let calls: Vec<Call> = cases
                .iter()
                .map(|(c, _)| (c.0, c.1, c.2, c.3.as_slice()))
                .collect();
            let want: Vec<(String, u32)> =
                cases.iter().map(|(c, v)| (c.0.to_owned(), v[i])).collect();
            assert_eq!(verdicts(sockets, &calls), want, "{sockets:?}");
        }
    }

    /// The kernel's keyrings and the kernel facilities no server needs are refused; a listener
    /// only where the network is not the proxy's alone.
    #[test]
    fn keyrings_and_listeners() {
        let calls: &[Call] = &[
            ("keyctl", libc::SYS_keyctl, ARCH, &[0]),
            ("add_key", libc::SYS_add_key, ARCH, &[]),
            ("request_key", libc::SYS_request_key, ARCH, &[]),
            ("bpf", libc::SYS_bpf, ARCH, &[]),
            ("userfaultfd", libc::SYS_userfaultfd, ARCH, &[]),
            ("perf_event_open", libc::SYS_perf_event_open, ARCH, &[]),
            ("listen", libc::SYS_listen, ARCH, &[3, 1]),
        ];
        let got: Vec<Vec<(String, u32)>> = ALL.iter().map(|s| verdicts(*s, calls)).collect();
        let refused = |listen: u32| {
            let mut v: Vec<(String, u32)> = calls.iter().map(|c| (c.0.to_owned(), EPERM)).collect();
            v[6].1 = listen;
            v
        };
        assert_eq!(got, [refused(ALLOW), refused(ALLOW), refused(EPERM)]);
    }

    /// No keystrokes typed into a terminal; other ioctls pass.
    #[test]
    fn nothing_is_typed_into_a_terminal() {
        let calls: &[Call] = &[
            ("TIOCSTI", libc::SYS_ioctl, ARCH, &[0, libc::TIOCSTI as i64]),
            (
                "TIOCLINUX",
                libc::SYS_ioctl,
                ARCH,
                &[0, libc::TIOCLINUX as i64],
            ),
            (
                "TIOCGWINSZ",
                libc::SYS_ioctl,
                ARCH,
                &[1, libc::TIOCGWINSZ as i64],
            ),
        ];
        let want = expect(&[
            ("TIOCSTI", EPERM),
            ("TIOCLINUX", EPERM),
            ("TIOCGWINSZ", ALLOW),
        ]);
        for sockets in ALL {
            assert_eq!(verdicts(sockets, calls), want, "{sockets:?}");
        }
    }

    /// Fast Open's implicit connect is refused; other flags pass.
    #[test]
    fn tcp_fast_open_is_refused() {
        let f = i64::from(MSG_FASTOPEN);
        let calls: &[Call] = &[
            (
                "sendto fastopen",
                libc::SYS_sendto,
                ARCH,
                &[3, 0, 1, f, 0, 0],
            ),
            (
                "sendto fastopen nosignal",
                libc::SYS_sendto,
                ARCH,
                &[3, 0, 1, f | i64::from(MSG_NOSIGNAL), 0, 0],
            ),
            ("sendmsg fastopen", libc::SYS_sendmsg, ARCH, &[3, 0, f]),
            ("sendmmsg fastopen", libc::SYS_sendmmsg, ARCH, &[3, 0, 1, f]),
            (
                "sendto nosignal",
                libc::SYS_sendto,
                ARCH,
                &[3, 0, 1, MSG_NOSIGNAL.into(), 0, 0],
            ),
            ("sendmsg 0", libc::SYS_sendmsg, ARCH, &[3, 0, 0]),
            ("sendmmsg 0", libc::SYS_sendmmsg, ARCH, &[3, 0, 1, 0]),
        ];
        let want = expect(&[
            ("sendto fastopen", EPERM),
            ("sendto fastopen nosignal", EPERM),
            ("sendmsg fastopen", EPERM),
            ("sendmmsg fastopen", EPERM),
            ("sendto nosignal", ALLOW),
            ("sendmsg 0", ALLOW),
            ("sendmmsg 0", ALLOW),
        ]);
        for sockets in ALL {
            assert_eq!(verdicts(sockets, calls), want, "{sockets:?}");
        }
    }

    /// UNIX stream and seqpacket pairs work; datagram pairs (and SOCK_RAW, a datagram socket
    /// in AF_UNIX) and other domains do not.
    #[test]
    fn only_connected_unix_pairs() {
        let pair = libc::SYS_socketpair;
        let calls: &[Call] = &[
            (
                "stream",
                pair,
                ARCH,
                &[AF_UNIX.into(), SOCK_STREAM.into(), 0],
            ),
            (
                "stream cloexec",
                pair,
                ARCH,
                &[AF_UNIX.into(), (SOCK_STREAM | SOCK_CLOEXEC).into(), 0],
            ),
            (
                "seqpacket",
                pair,
                ARCH,
                &[AF_UNIX.into(), SOCK_SEQPACKET.into(), 0],
            ),
            ("dgram", pair, ARCH, &[AF_UNIX.into(), SOCK_DGRAM.into(), 0]),
            (
                "dgram cloexec",
                pair,
                ARCH,
                &[AF_UNIX.into(), (SOCK_DGRAM | SOCK_CLOEXEC).into(), 0],
            ),
            ("raw", pair, ARCH, &[AF_UNIX.into(), SOCK_RAW.into(), 0]),
            (
                "inet stream",
                pair,
                ARCH,
                &[AF_INET.into(), SOCK_STREAM.into(), 0],
            ),
        ];
        let want = expect(&[
            ("stream", ALLOW),
            ("stream cloexec", ALLOW),
            ("seqpacket", ALLOW),
            ("dgram", EPERM),
            ("dgram cloexec", EPERM),
            ("raw", EPERM),
            ("inet stream", EPERM),
        ]);
        for sockets in ALL {
            assert_eq!(verdicts(sockets, calls), want, "{sockets:?}");
        }
    }

    /// The rest: plain calls pass, io_uring does not.
    #[test]
    fn plain_calls_pass_and_io_uring_does_not() {
        let calls: &[Call] = &[
            ("read", libc::SYS_read, ARCH, &[0, 0, 1]),
            ("connect", libc::SYS_connect, ARCH, &[3, 0, 16]),
            ("setsockopt", libc::SYS_setsockopt, ARCH, &[3, 6, 30, 0, 4]),
            ("io_uring_setup", libc::SYS_io_uring_setup, ARCH, &[8, 0]),
            (
                "io_uring_enter",
                libc::SYS_io_uring_enter,
                ARCH,
                &[3, 1, 0, 0],
            ),
            (
                "io_uring_register",
                libc::SYS_io_uring_register,
                ARCH,
                &[3, 0, 0, 0],
            ),
        ];
        let want = expect(&[
            ("read", ALLOW),
            ("connect", ALLOW),
            ("setsockopt", ALLOW),
            ("io_uring_setup", EPERM),
            ("io_uring_enter", EPERM),
            ("io_uring_register", EPERM),
        ]);
        for sockets in ALL {
            assert_eq!(verdicts(sockets, calls), want, "{sockets:?}");
        }
    }

    #[test]
    fn sockets_follow_the_network_and_the_namespace() {
        let list = Network::Only(Vec::new());
        let got = [
            Sockets::of(&Network::None, false),
            Sockets::of(&Network::None, true),
            Sockets::of(&Network::Host, false),
            Sockets::of(&Network::Host, true),
            Sockets::of(&list, false),
            Sockets::of(&list, true),
        ];
        use Sockets::*;
        assert_eq!(got, [None, Inet, Inet, Inet, Proxy, Inet]);
    }
}
