//! The sandboxed server's system-call filter (seccomp, built by `seccompiler`): no UNIX
//! socket is created (`socket(AF_UNIX, ...)` fails with EPERM), so no socket outside the
//! sandbox is reachable, by path or in the abstract namespace, whatever its network; and no
//! io_uring, whose requests do not pass through the filter. Pairs of connected sockets
//! (`socketpair`, how Node and Python talk to their own children) still work: they reach
//! nothing. A system call of another architecture's table (a 32-bit one on x86_64) kills the
//! process.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// The filter, compiled before the fork and loaded in the child.
pub struct Filter(BpfProgram);

impl Filter {
    pub fn new() -> Result<Filter, String> {
        let arch = if cfg!(target_arch = "x86_64") {
            TargetArch::x86_64
        } else if cfg!(target_arch = "aarch64") {
            TargetArch::aarch64
        } else if cfg!(target_arch = "riscv64") {
            TargetArch::riscv64
        } else {
            return Err(format!("no filter for {}", std::env::consts::ARCH));
        };
        let unix = SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Eq,
            libc::AF_UNIX as u64,
        )
        .map_err(|e| e.to_string())?;
        let rules: BTreeMap<i64, Vec<SeccompRule>> = [
            (
                libc::SYS_socket,
                vec![SeccompRule::new(vec![unix]).map_err(|e| e.to_string())?],
            ),
            (libc::SYS_io_uring_setup, Vec::new()),
            (libc::SYS_io_uring_enter, Vec::new()),
            (libc::SYS_io_uring_register, Vec::new()),
        ]
        .into_iter()
        .collect();
        let filter = SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(libc::EPERM as u32),
            arch,
        )
        .map_err(|e| e.to_string())?;
        BpfProgram::try_from(filter)
            .map(Filter)
            .map_err(|e| e.to_string())
    }

    /// Loads the filter on this thread (in the forked child, before exec): two system calls.
    pub fn apply(&self) -> std::io::Result<()> {
        seccompiler::apply_filter(&self.0)
            .map_err(|_| std::io::Error::from_raw_os_error(libc::EPERM))
    }
}
