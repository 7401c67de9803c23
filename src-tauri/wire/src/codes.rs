//! Stable failure codes: the one table of every failure kind Warden reports, each with its
//! cause and fix. Codes appear in JSON (`data.code` of a bridge's JSON-RPC error, `code`
//! elsewhere), in event-log lines and in UI text; docs/errors.md is generated from this table
//! (a test fails on drift). A code, once published, keeps its meaning.
//!
//! Add a code as one line of `codes!` below, in the block of its area (blocks sorted by code).

macro_rules! codes {
    ($($variant:ident = $code:literal, $cause:literal, $fix:literal;)+) => {
        /// A stable failure code (`W-AREA-WHAT`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Code {
            $($variant,)+
        }

        impl Code {
            /// Every code, in the order of docs/errors.md.
            pub const ALL: &[Code] = &[$(Code::$variant,)+];

            /// The code as shown everywhere, e.g. `W-SPAWN-NOT-FOUND`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $code,)+
                }
            }

            /// What usually causes it, for a person.
            pub fn cause(self) -> &'static str {
                match self {
                    $(Code::$variant => $cause,)+
                }
            }

            /// What to do about it, for a person.
            pub fn fix(self) -> &'static str {
                match self {
                    $(Code::$variant => $fix,)+
                }
            }
        }
    };
}

codes! {
    // Requests the bridge answered itself (JSON-RPC errors, `data.kind`, docs/behaviour.md).
    BatchRefused = "W-BATCH-REFUSED",
        "The client sent a JSON-RPC batch (an array of messages). Batches left MCP in protocol version 2025-06-18, and Warden must judge each call on its own (tools_deny, tools_ask), so it sent none of the batch to the server and answered each request in it with this error.",
        "Send each message on its own line; a client that still sends batches needs an update (MCP SDKs since 2025-06-18 do not).";
    CircuitOpen = "W-CIRCUIT-OPEN",
        "The server failed `circuit_failures` times in a row (exits, failed starts, timeouts), so the circuit breaker opened: requests fail at once until `circuit_cooldown_ms` passes, then one request may start the server again.",
        "Look at the server's last error (`warden status`, its stderr) and fix the server; or raise `circuit_failures` in config.toml if it fails only now and then.";
    InvalidResponse = "W-INVALID-RESPONSE",
        "The server answered a request with a line that is not valid JSON (for example invalid UTF-8). Warden dropped it and failed the request.",
        "A bug in the server: turn on `debug` for it to see the line, and report it to the server's authors.";
    ListTooLarge = "W-LIST-TOO-LARGE",
        "The server's answer to a request whose answer Warden must check before the client sees it (`initialize`, `server/discover`, `tools/list`, `prompts/list`, `resources/list`: the tool policy and pinning read them) was larger than `max_list_bytes`, so Warden did not pass it on and failed the request. The session goes on.",
        "Raise `max_list_bytes` for this server in config.toml (or `--set max_list_bytes=...`) to at least the size in `data.bytes`; or ask the server's authors to page the list (`nextCursor`).";
    MaxTimeout = "W-MAX-TIMEOUT",
        "A request ran past `max_timeout_ms`, the hard limit that applies even while the tool reports progress. Warden cancelled it.",
        "If the tool really needs longer, raise `max_timeout_ms` for this server in config.toml.";
    ParseError = "W-PARSE-ERROR",
        "The client sent a line that is not JSON.",
        "A bug in the client: its own log shows what it sent.";
    RequestTooLarge = "W-REQUEST-TOO-LARGE",
        "A request from the client was larger than `max_message_bytes`; it was never sent to the server.",
        "Send less in one request, or raise `max_message_bytes` for this server in config.toml.";
    ResponseTooLarge = "W-RESPONSE-TOO-LARGE",
        "The server's answer was larger than `max_message_bytes`; Warden dropped it so the session can go on.",
        "Ask for less (fewer results, a narrower path), or raise `max_message_bytes` for this server in config.toml.";
    ServerExited = "W-SERVER-EXITED",
        "The server process exited while the request was in flight, and the request was not safe to re-send (or its retries were used up). `data.exit` and `data.stderr_tail` say how it ended.",
        "Read the server's stderr tail for the reason. If the tool is safe to repeat, list it in `idempotent_tools` so Warden re-sends it after a restart.";
    StartupTimeout = "W-STARTUP-TIMEOUT",
        "The server was (re)starting and did not become ready within `startup_timeout_ms`, so the request was never sent.",
        "Raise `startup_timeout_ms` if the server is slow to start (npx/uvx downloads on a cold cache); run it once by hand to fill the cache.";
    Timeout = "W-TIMEOUT",
        "A request had no response, progress or activity for `idle_timeout_ms`. Warden cancelled it.",
        "If the tool is slow but working, raise `idle_timeout_ms` for this server in config.toml; if the server is stuck, restart it.";
    ToolDenied = "W-TOOL-DENIED",
        "The client called a tool that `tools_allow` / `tools_deny` hide for this server; Warden answered instead of the server (and left the tool out of `tools/list`).",
        "If the client should use it, remove it from `tools_deny` or add it to `tools_allow` (the server page's limits form, or config.toml); running sessions see the change at once.";
    ToolDeclined = "W-TOOL-DECLINED",
        "The client called a tool that `tools_ask` makes Warden ask about, and the answer was no (the user declined in the client's prompt, or `warden approvals deny`). The server never saw the call.",
        "If the call should run, call it again and allow it; to stop being asked, allow it with `warden approvals allow ID --always`, or take the tool out of `tools_ask`.";
    ToolNotApproved = "W-TOOL-NOT-APPROVED",
        "The client called a tool that `tools_ask` makes Warden ask about, and no answer came within `ask_timeout_ms`, or there was no one to ask (the client does not support elicitation and no supervisor runs), or a 2026-07-28 client came back with a `requestState` Warden did not make for this call, or one already used or expired (`data.request_state` says which). The server never saw the call.",
        "Answer the question in time (`warden approvals`, the client's prompt), run Warden's app or `warden daemon` so there is someone to ask, raise `ask_timeout_ms`, or take the tool out of `tools_ask`.";
    InputUnavailable = "W-INPUT-UNAVAILABLE",
        "A server that speaks only MCP 2026-07-28 needed input to answer a call (an `input_required` result: an elicitation, a sampling request or the roots), and the client in front of it, which speaks the older handshake through Warden's era adapter, did not declare that it can give it, or answered the question with an error. The call was not completed.",
        "Use a client that supports what the server asks for (elicitation, sampling or roots), or a server that does not need it for this call.";
    ToolQuarantined = "W-TOOL-QUARANTINED",
        "The client called a tool that `pin_tools = \"block\"` holds back because its definition changed (or it is new) since it was pinned; Warden answered instead of the server.",
        "Check what changed with `warden tools diff SERVER` and approve it with `warden tools approve SERVER TOOL` (or the server page); running sessions then see the tool again.";

    // Tool pinning (`pin_tools`): events, notices and `warden tools`.
    PinsInvalid = "W-PINS-INVALID",
        "The tool pins of a server (`pins/<server>.json` in the state directory) cannot be read or saved. Warden leaves the file as it is and checks no tool of that server until it can.",
        "Repair the file, or delete it so the tools the server lists next are pinned; make sure the state directory is writable.";
    ToolChanged = "W-TOOL-CHANGED",
        "A tool's definition (description, input schema or annotations) is not the one pinned when Warden first saw the server: an update, or a server that changed what it tells the model (a \"rug pull\"). With `pin_tools = \"warn\"` it is reported; with `\"block\"` it is held back until approved.",
        "Read what changed (`warden tools diff SERVER`, or the server page) and approve it if you trust it (`warden tools approve SERVER TOOL`, or the Approve button); otherwise remove the server.";
    ToolDuplicate = "W-TOOL-DUPLICATE",
        "The server listed two tools with the same name in one `tools/list` answer. Warden pins and checks the first one and passes the list on as the server sent it; which one a client calls is up to the client.",
        "A bug in the server: report it to its authors. `warden tools diff SERVER` shows the definition Warden pinned.";
    ToolNew = "W-TOOL-NEW",
        "The server lists a tool it did not have when Warden pinned its tools. With `pin_tools = \"warn\"` it is reported; with `\"block\"` it is held back until approved.",
        "Look at it (`warden tools diff SERVER`, or the server page) and approve it if you trust it (`warden tools approve SERVER TOOL`, or the Approve button).";

    // The clients' config files (`warden clients`, `warden servers`, `warden install`, the
    // window's Clients and Manage pages); in every one of them no file was changed.
    ClientBackup = "W-CLIENT-BACKUP",
        "A backup to restore does not exist (a wrong id, or pruned: Warden keeps the last 10 per file) or cannot be read back.",
        "List the backups with `warden clients backups` (or Clients → Backups in the window) and pick another one.";
    ClientBusy = "W-CLIENT-BUSY",
        "The file kept changing while Warden was writing it, or another program held its lock directory (a client rewriting its own settings at that moment). Warden retries a few times, then stops without writing.",
        "Quit the client that rewrites the file (or wait until it is done), then run the command again; remove a stale lock directory if no client runs.";
    ClientChanged = "W-CLIENT-CHANGED",
        "A file (or an entry Warden keeps aside for it) changed after the preview you confirmed was made: applying it would no longer do what the preview showed, so nothing was written to that file.",
        "Look at the new preview and confirm that one: the window shows it in place of the old one; on the command line, run the command again.";
    ClientExists = "W-CLIENT-EXISTS",
        "A server of that name is already in one of the chosen clients' files (or is kept aside there, turned off by `warden servers disable`). The message shows the entry; nothing was written to any file.",
        "Pick another name (`--as` for `warden install`), or remove the existing one first (`warden servers remove NAME`), or turn it back on (`warden servers enable NAME`).";
    ClientIo = "W-CLIENT-IO",
        "A client's file or Warden's own state could not be read or written (permissions, a full disk, a missing home directory, a file watch limit). The message names the path and the system's error.",
        "Fix what the message names (free space, permissions, HOME), then run the command again.";
    ClientLayout = "W-CLIENT-LAYOUT",
        "The file is valid, but its servers are laid out in a way Warden does not edit safely (a Codex entry written with dotted keys or sharing a line, a YAML flow-style list), or Warden's edit did not read back as intended. Nothing was written.",
        "Make the change by hand in the client's settings; `warden clients backups` keeps earlier versions. Please report the layout so Warden can learn it.";
    ClientNoSuchServer = "W-CLIENT-NO-SUCH-SERVER",
        "No entry of that name is in the chosen clients' files; or a set (`[sets.NAME]`) names a server no client's file has, or a set's remove finds nothing the set added there.",
        "Check the name and where it is with `warden servers list` (for a set, `warden sets list`); add the server to a client first, or take it out of the set.";
    ClientNotInstalled = "W-CLIENT-NOT-INSTALLED",
        "The client named with `--client` does not look installed: its configuration directory does not exist, so Warden does not create a file for it.",
        "Install the client and start it once, or leave out that `--client`.";
    ClientParse = "W-CLIENT-PARSE",
        "A client's config file is not valid JSON, JSONC, TOML or YAML (or not UTF-8 text). The message gives the line and column; the client cannot read it either.",
        "Correct the file at that place (or restore one of its backups with `warden clients restore`), then run the command again.";
    ClientReadOnly = "W-CLIENT-READ-ONLY",
        "The client's file is read-only, usually because a tool such as home-manager, chezmoi or a company policy generates it.",
        "Change the server where the file is generated, or make the file writable.";
    ClientUsage = "W-CLIENT-USAGE",
        "The request cannot be carried out as given: no `--client`, a name that cannot be a server name, a file Warden cannot tell the client of, secrets without the bridge (`--secret-env` with `--no-wrap`), a set config.toml does not have, a client with no project file for `--project`, or a secret written out in an entry a set would copy into a project's file.",
        "Do as the message says: name a client, use letters, digits, `-`, `_` or `.` in names, pass `--client` with `--file`, keep the bridge for secrets, add the set to config.toml (`[sets.NAME]`), leave out a client with no project file, or move the secret to the keychain first (`warden clients wrap --move-secrets`).";

    // config.toml and `--set`.
    ConfigInvalid = "W-CONFIG-INVALID",
        "config.toml or a `--set` has a value Warden cannot use: a syntax error, a value out of range, or keys that contradict each other. The message names the file, line, key and fix; a running bridge keeps its last good settings (`config_rejected` event), a new one does not start its server: it answers the client's `initialize` with this error (`spawn_failed`), logs it, and exits with status 2.",
        "Correct the value as the message says (docs/config.md lists every key with its range), or remove it to get the default.";

    // The control socket (`warden status`, `probe`, `restart` … and the bridges' reports).
    ControlForeign = "W-CONTROL-FOREIGN",
        "A program in another user or pid namespace than the supervisor's (a server in Warden's bubblewrap sandbox, a container) asked the supervisor, through the control socket, to act: run a probe, restart a server, change config.toml or a client's file, approve tools, stop a process, or answer for a bridge; or to read the user's files for it (client configs, backups, limits). Such programs may only watch (status, history, events, a bridge's reports), so the supervisor refused and changed nothing. A peer whose namespaces cannot be read (no pid, its /proc entry hidden) counts as foreign.",
        "Run the command from your own session, outside the sandbox or container. If a hostile server sent it, look at which server's sandbox the pid in the supervisor's log belongs to.";

    // Secrets in the OS keychain (`--move-secrets`, `--secret-env`).
    KeychainUnavailable = "W-KEYCHAIN-UNAVAILABLE",
        "No OS keychain answered: on Linux no Secret Service (gnome-keyring, KeePassXC, KWallet) runs on the session bus, or it is locked and waits for a password nobody sees (Warden waits 20 s). `warden clients wrap --move-secrets` then moves nothing and leaves the file unchanged; a bridge with `--secret-env` does not start its server and answers `initialize` with this error.",
        "Start and unlock the keychain (log in to the desktop session; `gnome-keyring-daemon --unlock` on a bare session), then restart the client's MCP connection. Or unwrap the entry: its values are written back into the client's file.";
    SecretInUse = "W-SECRET-IN-USE",
        "Warden was asked to store a value in the OS keychain as `mcp-warden` / `SERVER/VAR` (`warden servers add --secret-env`, `warden install`), but the keychain holds a different value there, and an entry of another client's file still reads it (`warden bridge --server SERVER --secret-env VAR`): storing the new value would change what that entry's server gets. Nothing was stored or written; the message names the entries.",
        "If that entry should get the new value too, run the command again with `--replace-secret` (on a terminal you are asked instead). Else give the new entry another server name (`--as NAME` for `warden install`, another NAME for `warden servers add`), so that it has keychain items of its own.";
    SecretMissing = "W-SECRET-MISSING",
        "A bridge was told to read a value from the keychain (`--secret-env VAR`), but the keychain has no entry `mcp-warden` / `SERVER/VAR` (deleted, or the entry was copied to another machine or renamed). The server was not started.",
        "Store the value again (`secret-tool store --label=warden service mcp-warden username SERVER/VAR` on Linux), or put it back in the client's config entry in place of the placeholder and remove `--secret-env VAR` from its args.";

    // Warden's ledger of its edits of the clients' files ($WARDEN_STATE_DIR/clients/ledger.json).
    LedgerUnreadable = "W-LEDGER-UNREADABLE",
        "Warden's ledger (`clients/ledger.json` in the state directory: how to undo each of Warden's edits of the clients' files, and the entries `warden servers disable` took out of them) exists but cannot be read, is not valid JSON, or holds a record that does not fit its file. Warden left it as it is and changed nothing: writing over it could lose an entry kept only there.",
        "Repair the file, or move it aside to start afresh (`mv ledger.json ledger.json.damaged`, in the directory the message names); Warden then no longer knows what it did, so unwrap and enable work from the files alone. An entry `disable` took out is in the moved file (its `raw` text) and in the backups Warden took of its client's file before each edit (`backups/` beside `clients/`: `warden clients backups`, then `warden clients restore ID`).";

    // The MCP Registry (`warden registry`, `warden install`); nothing is written in any of them.
    RegistryInvalid = "W-REGISTRY-INVALID",
        "The registry answered, but not with what its v0.1 API promises: the answer is not JSON, is cut short, or lacks the fields of a server document (a proxy's error page, a registry that speaks another API version, or a server that failed mid-answer). The message names the URL and what was wrong.",
        "Try again with `--refresh` (a cut-short answer is not cached). If it persists, check that the registry URL (`WARDEN_REGISTRY_URL`, or `[registry] url` in config.toml) points at an MCP Registry's base URL, without `/v0.1`; report a bad document to the registry's maintainers.";
    RegistryNotFound = "W-REGISTRY-NOT-FOUND",
        "The registry has no server of that name, or no such version of it. Names are the registry's full reverse-DNS names, such as `io.github.microsoft/playwright-mcp`, not the short entry name.",
        "Find the exact name with `warden registry search TERM`, and the versions with `warden registry show NAME`; leave out `--version` to get the latest.";
    RegistryUnreachable = "W-REGISTRY-UNREACHABLE",
        "Warden could not get an answer from the registry: no network, the name does not resolve, the connection was refused or timed out (10 s), TLS failed, or the registry answered with an HTTP error other than 404 (a server error, a rate limit, a refused request). The message names the URL and the status.",
        "Check the network connection and try again. To use another registry (a mirror or a company's subregistry), set `WARDEN_REGISTRY_URL` or `url` in the `[registry]` table of config.toml.";

    // Remote servers (`warden bridge --remote URL`, Streamable HTTP).
    RemoteUnreachable = "W-REMOTE-UNREACHABLE",
        "Warden could not get an answer from a remote MCP server: the name does not resolve, the connection was refused or timed out, the connection closed before the answer ended, or the server answered with an HTTP error; over the deprecated HTTP+SSE transport, also when the server's stream ended before it answered, or its `endpoint` named another origin (refused: nothing is sent there). The message names the URL and the HTTP status. The request was not answered by the server.",
        "Check the URL (`warden servers list` shows it) and the network; try again once the server is up. An HTTP 404 after a while means the server ended the session: the next request starts a new one.";
    RemoteTls = "W-REMOTE-TLS",
        "The remote server's TLS certificate could not be verified (expired, for another name, or from an authority the web's roots do not include), so Warden sent it nothing.",
        "Check the URL's host name; a server with a private certificate authority is not supported yet.";
    AuthInsecure = "W-AUTH-INSECURE",
        "A remote server's URL (or an endpoint met on the way) is plain `http` to a host that is not this machine, or carries a user name or password: a token or a call could be read or changed on the network, or the credentials would be logged, so Warden refused it before connecting.",
        "Use the server's `https` URL, and give credentials with `--header NAME=ENVVAR`. Plain `http` is allowed only to this machine (localhost, 127.0.0.1, ::1).";
    AuthRequired = "W-AUTH-REQUIRED",
        "The remote server answered 401 or 403 and no sign-in could be made: it publishes no OAuth metadata (RFC 9728), its authorization server offers no way to register, no browser came back within 5 minutes, or the token given with `--header Authorization=…` was refused.",
        "Sign in when the browser opens (set `$BROWSER` if none does, or open the link the bridge prints on stderr), or give the server's token with `--header Authorization=ENVVAR` (the variable holding `Bearer …`).";
    AuthDenied = "W-AUTH-DENIED",
        "The sign-in was refused: the authorization server said no, the redirect came back from another issuer than the one asked (RFC 9207), the server does not offer PKCE S256, or the token exchange or refresh failed.",
        "Sign in again (the next call opens the browser again); if it keeps failing, check the server's documentation for the account or scopes it needs.";

    // The sandbox (`sandbox = "on"`, Linux); a sandboxed server is never run without it.
    SandboxContainer = "W-SANDBOX-CONTAINER",
        "The server's config says `sandbox = \"on\"`, but its command is a container runner (`docker`, `podman`, `nerdctl`): the server would run in the runner's daemon, outside any sandbox Warden can make (with whatever the runner's options give it). The server was not started.",
        "Use the container's own isolation and set `sandbox = \"off\"` for this server, after reading its `run` options (`--privileged`, `-v`, `--network=host` widen what it gets); or run the server's package directly (npx, uvx) in Warden's sandbox.";
    SandboxDegraded = "W-SANDBOX-DEGRADED",
        "bubblewrap cannot make a sandbox here (user namespaces refused, as on Ubuntu 23.10 and later), so Landlock (Linux 6.12+) confines the server instead: reads, writes, TCP, signals and sockets as configured, its temp files in a folder of its own; but it has no pid namespace (it sees the user's processes in /proc, though not their memory or environment), and with a `sandbox_network` list its TCP may reach the proxy's port number on any address. `warden status` shows `sandbox: \"landlock\"`.",
        "Allow bubblewrap its user namespaces to get the full sandbox (see W-SANDBOX-USERNS-DENIED for how), then restart the server; or accept what Landlock gives.";
    SandboxGrant = "W-SANDBOX-GRANT",
        "A folder in the server's `sandbox_write` would let it change what runs outside the sandbox later: the home folder itself (its shell start-up files), a folder that holds the home, a folder on `PATH` (or one that holds it), or a folder inside one of the names that stay read-only in every grant (`.git`, `.vscode`, `.claude`, ... in the home: other programs run what they hold). The server was not started.",
        "Grant the project folder the server works in (`sandbox_write = [\"~/projects/app\"]`), not the home or a folder programs are run from; the message names the grant and why.";
    SandboxKernel = "W-SANDBOX-KERNEL",
        "bubblewrap cannot make a sandbox here, and this kernel's Landlock is older than ABI 6 (Linux 6.12): it could not keep the server's signals and abstract sockets in, so the server was not started.",
        "Allow bubblewrap its user namespaces (see W-SANDBOX-USERNS-DENIED), or run a kernel 6.12 or newer; else set `sandbox = \"off\"` for this server.";
    SandboxOwnFolder = "W-SANDBOX-OWN-FOLDER",
        "The server's own folder under Warden's state (`sandbox/<server>-<hash>`) holds a symbolic link or a file where Warden keeps one of its folders (`npm`, `uv`, `pip`, `cache`, `tmp`). The server writes that folder, so it may have planted the link to make Warden create folders wherever it points on its next start. Warden follows no link there, and did not start the server.",
        "Delete the path the message names (Warden makes the folder again at the next start). If the server made it, it tried to reach outside its sandbox: check where it comes from.";
    SandboxUnavailable = "W-SANDBOX-UNAVAILABLE",
        "The server's config says `sandbox = \"on\"`, but no sandbox can be set up here: bubblewrap (`bwrap`) is not installed in the system's folders (/usr/bin, /bin, /usr/local/bin), Landlock is not available, or `sandbox_mode` allows only the one that is missing. The server was not started: the client's `initialize` got this error.",
        "Install bubblewrap (`sudo apt-get install bubblewrap` on Debian and Ubuntu, `dnf install bubblewrap` on Fedora), or set `sandbox = \"off\"` for this server if you accept running it with your full rights.";
    SandboxUsernsDenied = "W-SANDBOX-USERNS-DENIED",
        "bubblewrap may not create the user namespaces the sandbox is made of: Ubuntu 23.10 and later restrict them with AppArmor (`kernel.apparmor_restrict_unprivileged_userns = 1`), other systems with `kernel.unprivileged_userns_clone = 0`. The server was not started.",
        "On Ubuntu, install the AppArmor profile that allows bwrap (`sudo apt-get install apparmor-profiles` and `sudo ln -s /usr/share/apparmor/extra-profiles/bwrap-userns-restrict /etc/apparmor.d/ && sudo systemctl reload apparmor`), or allow unprivileged user namespaces (`sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0`, or `kernel.unprivileged_userns_clone=1`); else set `sandbox = \"off\"` for this server.";

    // The server could not be started (`spawn_failed`, the answer to the client's `initialize`).
    SpawnCrashLoop = "W-SPAWN-CRASH-LOOP",
        "The server exited again right after each restart before it ever answered `initialize` (`circuit_failures` times), so Warden stopped restarting it.",
        "Run the server's command by hand in a terminal and read what it prints; fix its arguments, environment or installation.";
    SpawnError = "W-SPAWN-ERROR",
        "The operating system refused to start the server's command for another reason (shown in the cause).",
        "Run the command by hand in a terminal to see the same error, and fix what it names.";
    SpawnExited = "W-SPAWN-EXITED",
        "The server exited with a non-zero status (or at all) before answering `initialize`; often a missing API key, a wrong argument or a missing dependency. Its stderr tail says which.",
        "Read the stderr tail: set the environment variable or argument it asks for in the client's config entry, then restart the client's MCP connection.";
    SpawnNotFound = "W-SPAWN-NOT-FOUND",
        "The server's command was not found: not on the PATH the bridge searched (a GUI-launched IDE often passes a short PATH, without nvm, Homebrew or ~/.local/bin), or the path does not exist.",
        "Use the command's absolute path in the client's config entry (`command -v NAME` in a terminal prints it), or install it.";
    SpawnPermissionDenied = "W-SPAWN-PERMISSION-DENIED",
        "The server's command exists but may not be run: not executable, or a directory it is in may not be searched.",
        "Make the file executable (`chmod +x FILE`), or point the client's config entry at the right program.";
    SpawnSignal = "W-SPAWN-SIGNAL",
        "The server was killed by a signal before answering `initialize` (a crash such as SIGSEGV, or killed from outside, e.g. the out-of-memory killer).",
        "Run the server's command by hand to see the crash; check `dmesg` for the out-of-memory killer.";
    SpawnStartupTimeout = "W-SPAWN-STARTUP-TIMEOUT",
        "The server did not answer `initialize` within `startup_timeout_ms` after it was started.",
        "Raise `startup_timeout_ms` if it is slow to start (npx/uvx downloads on a cold cache; run it once by hand to fill the cache), or check that it is an MCP stdio server at all.";
    SpawnStdoutNoise = "W-SPAWN-STDOUT-NOISE",
        "The server wrote only lines that are not JSON-RPC to stdout and never answered `initialize`: it logs to stdout, or is not an MCP stdio server (or needs an argument such as `stdio` to be one).",
        "Check the server's arguments (many need `stdio` or `--stdio`), or make it log to stderr.";
}

/// docs/errors.md: every code with its cause and fix, from the table above.
pub fn reference_markdown() -> String {
    let mut md = String::from(
        "# Failure codes\n\n\
         <!-- Generated from src-tauri/wire/src/codes.rs by \
         `UPDATE_DOCS=1 cargo test -p warden-wire codes`; do not edit by hand. -->\n\n\
         Every failure Warden reports carries one of these stable codes: `data.code` in the \
         JSON-RPC errors the bridge sends to the client, `code` in event-log lines \
         (`$WARDEN_STATE_DIR/logs/<server>-<hash>.jsonl`) and in status JSON. A code keeps its meaning \
         across versions.\n\n\
         | code | cause | fix |\n|---|---|---|\n",
    );
    for code in Code::ALL {
        md.push_str(&format!(
            "| `{}` | {} | {} |\n",
            code.as_str(),
            code.cause().replace('|', "\\|"),
            code.fix().replace('|', "\\|")
        ));
    }
    md
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn codes_are_unique_and_well_formed() {
        let mut seen = HashSet::new();
        for code in Code::ALL {
            let s = code.as_str();
            assert!(seen.insert(s), "{s} twice");
            assert!(
                s.starts_with("W-") && s[2..].chars().all(|c| c.is_ascii_uppercase() || c == '-'),
                "{s}"
            );
            assert!(!code.cause().is_empty() && !code.fix().is_empty(), "{s}");
        }
    }

    #[test]
    fn docs_errors_md_is_up_to_date() {
        crate::assert_generated(
            "docs/errors.md",
            &reference_markdown(),
            "cargo test -p warden-wire --lib -- codes",
        );
    }
}
