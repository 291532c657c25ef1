//! What OAuth credentials keep between runs of a program, in a file of the user's choosing:
//! the client's registration at each authorization server (by issuer) and the token had
//! for each MCP endpoint (by its URL), so that a command line called again neither
//! registers again nor asks the person to sign in again while its tokens are good or can
//! be refreshed. On Unix the file is readable and writable by its owner alone (a file
//! others can read is refused, as `ssh` refuses such a key), and written whole each time (to
//! a new file of a name nobody can guess, created anew, then renamed over the old one), so a
//! reader never sees half of it. Updates take turns (`turns`), each reading the file anew,
//! so what several programs keep for different servers stays. A token bound to the
//! client's proof key (DPoP) is not kept: the key lives in memory only, and a token
//! without it is of no use. Registrations are
//! kept by the authorization server the client looked up (not by what its metadata claims),
//! with the token endpoint and the grant they were made for, and used again only where all
//! three still hold.

use super::discovery::Issuer;
use super::grant::{Identity, Method, Tokens};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The file, as it is written. (No `Debug`: it holds secrets.)
#[derive(Default, Serialize, Deserialize)]
pub(super) struct Kept {
    /// The client's registrations, by the issuer of the authorization server.
    #[serde(default)]
    pub(super) registrations: BTreeMap<String, KeptIdentity>,
    /// The tokens, by the URL of the MCP endpoint they were had for.
    #[serde(default)]
    pub(super) tokens: BTreeMap<String, KeptToken>,
}

/// Who the client is at an authorization server.
#[derive(Clone, Serialize, Deserialize)]
pub(super) struct KeptIdentity {
    client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_secret: Option<String>,
    /// How it authenticates at the token endpoint, as registrations name it.
    method: String,
    /// The grant it was made for (`authorization_code`, `client_credentials`).
    pub(super) grant: String,
    /// The token endpoint it was made with: a server that names another now is another.
    pub(super) token_endpoint: String,
    /// The redirect URI it was registered with, when a person authorizes it: a receiver
    /// that listens elsewhere now needs a registration of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) redirect_uri: Option<String>,
}

/// A token had for an MCP endpoint.
#[derive(Clone, Serialize, Deserialize)]
pub(super) struct KeptToken {
    pub(super) issuer: Issuer,
    /// The issuer the client looked up (what the registration is kept by).
    pub(super) issuer_key: String,
    pub(super) identity: KeptIdentity,
    /// The resource the token is for (what token requests name).
    pub(super) resource: String,
    pub(super) access_token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    refresh_token: Option<String>,
    /// When the access token stops being good, in seconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    expires_at: Option<u64>,
    /// The scopes asked for.
    #[serde(default)]
    pub(super) scopes: Vec<String>,
}

impl KeptIdentity {
    /// `identity` as kept, made for `grant` with the token endpoint `token_endpoint`; a
    /// private key is not written (the settings give it again).
    pub(super) fn of(
        identity: &Identity,
        grant: &str,
        token_endpoint: &str,
        redirect_uri: Option<String>,
    ) -> KeptIdentity {
        let method = match &identity.method {
            Method::Basic => "client_secret_basic",
            Method::Post => "client_secret_post",
            Method::None => "none",
            Method::PrivateKeyJwt { .. } => "private_key_jwt",
        };
        KeptIdentity {
            client_id: identity.client_id.clone(),
            client_secret: identity.secret.clone(),
            method: method.to_owned(),
            grant: grant.to_owned(),
            token_endpoint: token_endpoint.to_owned(),
            redirect_uri,
        }
    }

    /// The client id.
    pub(super) fn client_id(&self) -> &str {
        &self.client_id
    }

    /// Leaves the secret out (a secret the settings give each run).
    pub(super) fn forget_secret(&mut self) {
        self.client_secret = None;
    }

    /// The identity again; `key` is the settings' private key, which a `private_key_jwt`
    /// identity needs (without it the identity is of no use).
    pub(super) fn identity(&self, key: Option<Method>) -> Option<Identity> {
        let method = match self.method.as_str() {
            "private_key_jwt" => key?,
            named => Method::named(named)?,
        };
        Some(Identity {
            client_id: self.client_id.clone(),
            secret: self.client_secret.clone(),
            method,
        })
    }
}

impl KeptToken {
    /// `tokens` had from `issuer` as `identity` for `resource`, with `scopes`; `None` for
    /// a token bound to the client's proof key.
    pub(super) fn of(
        tokens: &Tokens,
        issuer: &Issuer,
        issuer_key: &str,
        identity: KeptIdentity,
        resource: &str,
        scopes: Vec<String>,
    ) -> Option<KeptToken> {
        if tokens.bound {
            return None;
        }
        let expires_at = tokens.expires.map(|at| {
            let left = at.saturating_duration_since(Instant::now());
            let since = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default();
            since.saturating_add(left).as_secs()
        });
        Some(KeptToken {
            issuer: issuer.clone(),
            issuer_key: issuer_key.to_owned(),
            identity,
            resource: resource.to_owned(),
            access_token: tokens.access.clone(),
            refresh_token: tokens.refresh.clone(),
            expires_at,
            scopes,
        })
    }

    /// The tokens again; one whose time is up counts as run out (refreshed before use),
    /// and one said to last past what a clock can hold lasts as long as one can.
    pub(super) fn tokens(&self) -> Tokens {
        let expires = self.expires_at.map(|at| {
            let since = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default();
            let left = Duration::from_secs(at).saturating_sub(since);
            let now = Instant::now();
            now.checked_add(left)
                .unwrap_or_else(|| now + Duration::from_secs(365 * 24 * 3600))
        });
        Tokens {
            access: self.access_token.clone(),
            refresh: self.refresh_token.clone(),
            expires,
            bound: false,
        }
    }
}

/// Where credentials are kept.
#[derive(Clone)]
pub(super) struct KeptFile {
    path: PathBuf,
}

impl KeptFile {
    pub(super) fn new(path: PathBuf) -> KeptFile {
        KeptFile { path }
    }

    /// What the file holds; nothing when there is no file yet. A file that cannot be read
    /// is an error naming it: written over, what it held would be lost.
    pub(super) fn read(&self) -> Result<Kept, String> {
        // A small local file, read when credentials are first needed: not worth a thread.
        let mut file = match std::fs::File::open(&self.path) {
            Ok(file) => file,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Kept::default())
            }
            Err(error) => return Err(self.unreadable(&error.to_string())),
        };
        // The mode of the file opened, not of what the path names a moment later.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = file
                .metadata()
                .map_err(|error| self.unreadable(&error.to_string()))?
                .permissions()
                .mode();
            if mode & 0o077 != 0 {
                return Err(format!(
                    "the OAuth credentials kept in {} can be read by others than its owner \
                     (mode {:o}): they are not used; make it the owner's alone (chmod 600) or \
                     remove it",
                    self.path.display(),
                    mode & 0o777
                ));
            }
        }
        let mut text = String::new();
        std::io::Read::read_to_string(&mut file, &mut text)
            .map_err(|error| self.unreadable(&error.to_string()))?;
        serde_json::from_str(&text).map_err(|error| self.unreadable(&error.to_string()))
    }

    fn unreadable(&self, why: &str) -> String {
        format!(
            "the OAuth credentials kept in {} cannot be read ({why}); remove the file to \
             authorize again",
            self.path.display()
        )
    }

    /// Changes what the file holds with `change`, read anew first so that what another
    /// run kept meanwhile (another server's token) stays, on a thread of the blocking pool:
    /// waiting for another program's update never holds up the runtime's threads.
    pub(super) async fn update_aside(
        &self,
        change: impl FnOnce(&mut Kept) + Send + 'static,
    ) -> Result<(), String> {
        let file = self.clone();
        tokio::task::spawn_blocking(move || file.update_within(change, super::turns::WAIT))
            .await
            .unwrap_or_else(|error| Err(format!("the OAuth credentials were not kept: {error}")))
    }

    /// Changes what the file holds with `change`, in its turn (`wait` at most for another
    /// program's update to end). Blocks the thread.
    pub(super) fn update_within(
        &self,
        change: impl FnOnce(&mut Kept),
        wait: Duration,
    ) -> Result<(), String> {
        let not_kept = |error: std::io::Error| {
            format!(
                "the OAuth credentials could not be kept in {}: {error}",
                self.path.display()
            )
        };
        private_dir(&self.path).map_err(not_kept)?;
        let _turn = super::turns::take(&self.path, wait)?;
        let mut kept = self.read()?;
        change(&mut kept);
        let text = serde_json::to_string_pretty(&kept).map_err(|error| error.to_string())?;
        write_private(&self.path, text.as_bytes()).map_err(not_kept)
    }
}

/// Makes the directory `path` is in, when there is none, the owner's alone.
fn private_dir(path: &Path) -> std::io::Result<()> {
    let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) else {
        return Ok(());
    };
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Writes `bytes` to `path` through a new file of the owner's alone, renamed over `path`.
/// The new file's name is random and it is created anew (never opened if it exists, nor
/// followed if it is a link), so nobody can have it written where they choose.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(format!(".{}.new", crate::call::ids::unguessable_id()));
    let new = path.with_file_name(name);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = options.open(&new).and_then(|mut file| {
        file.write_all(bytes)?;
        file.sync_all()
    });
    match written.and_then(|()| std::fs::rename(&new, path)) {
        Ok(()) => Ok(()),
        Err(error) => {
            let _ = std::fs::remove_file(&new);
            Err(error)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn issuer() -> Issuer {
        Issuer {
            issuer: "https://auth.example.test".to_owned(),
            authorization_endpoint: Some("https://auth.example.test/authorize".to_owned()),
            token_endpoint: "https://auth.example.test/token".to_owned(),
            registration_endpoint: None,
            scopes_supported: vec!["notes".to_owned()],
            auth_methods: Vec::new(),
            client_id_metadata_documents: false,
            iss_parameter: true,
            dpop_es256: false,
        }
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("kept-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir.join("deeper").join("oauth.json")
    }

    #[test]
    fn a_token_and_a_registration_come_back_as_they_were_kept() {
        let path = scratch("round");
        let file = KeptFile::new(path.clone());
        let identity = Identity {
            client_id: "client-1".to_owned(),
            secret: Some("shh".to_owned()),
            method: Method::Post,
        };
        let tokens = Tokens {
            access: "access-1".to_owned(),
            refresh: Some("refresh-1".to_owned()),
            expires: Some(Instant::now() + Duration::from_secs(3600)),
            bound: false,
        };
        let redirect = Some("http://127.0.0.1:9/callback".to_owned());
        let kept = KeptIdentity::of(&identity, "authorization_code", "https://t/token", redirect);
        let token = KeptToken::of(
            &tokens,
            &issuer(),
            "https://auth.example.test",
            kept.clone(),
            "https://mcp.test",
            vec![],
        )
        .unwrap();
        update(&file, |all| {
            all.registrations.insert(issuer().issuer, kept);
            all.tokens.insert("https://mcp.test/mcp".to_owned(), token);
        })
        .unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "readable by its owner alone");
        }
        let again = file.read().unwrap();
        let token = &again.tokens["https://mcp.test/mcp"];
        let back = token.tokens();
        assert_eq!(back.access, "access-1");
        assert_eq!(back.refresh.as_deref(), Some("refresh-1"));
        let left = back.expires.unwrap() - Instant::now();
        assert!(left > Duration::from_secs(3500) && left <= Duration::from_secs(3600));
        let identity = again.registrations[&issuer().issuer]
            .identity(None)
            .unwrap();
        assert_eq!(identity.client_id, "client-1");
        assert_eq!(identity.secret.as_deref(), Some("shh"));
        assert_eq!(identity.method, Method::Post);
        let _ = std::fs::remove_dir_all(path.parent().unwrap().parent().unwrap());
    }

    #[test]
    fn a_bound_token_and_a_key_identity_without_its_key_are_not_taken_back() {
        let tokens = Tokens {
            access: "a".to_owned(),
            refresh: None,
            expires: None,
            bound: true,
        };
        let identity = Identity {
            client_id: "c".to_owned(),
            secret: None,
            method: Method::None,
        };
        let kept = KeptIdentity::of(&identity, "client_credentials", "https://t/token", None);
        assert!(KeptToken::of(&tokens, &issuer(), "i", kept, "r", vec![]).is_none());
        let keyed = KeptIdentity {
            client_id: "c".to_owned(),
            client_secret: None,
            method: "private_key_jwt".to_owned(),
            grant: "client_credentials".to_owned(),
            token_endpoint: "https://t/token".to_owned(),
            redirect_uri: None,
        };
        assert!(keyed.identity(None).is_none());
        assert!(keyed.identity(Some(Method::Basic)).is_some());
    }

    #[test]
    fn an_expiry_past_what_a_clock_holds_lasts_rather_than_panics() {
        let kept = KeptToken {
            issuer: issuer(),
            issuer_key: "i".to_owned(),
            identity: KeptIdentity::of(
                &Identity {
                    client_id: "c".to_owned(),
                    secret: None,
                    method: Method::None,
                },
                "authorization_code",
                "https://t/token",
                None,
            ),
            resource: "r".to_owned(),
            access_token: "a".to_owned(),
            refresh_token: None,
            expires_at: Some(u64::MAX),
            scopes: Vec::new(),
        };
        assert!(kept.tokens().expires.unwrap() > Instant::now());
    }

    #[cfg(unix)]
    #[test]
    fn a_file_others_can_read_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let path = scratch("open");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "{}").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let why = KeptFile::new(path.clone()).read().err().expect("refused");
        assert!(
            why.contains("can be read by others") && why.contains("644"),
            "{why}"
        );
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(KeptFile::new(path.clone()).read().is_ok());
        let _ = std::fs::remove_dir_all(path.parent().unwrap().parent().unwrap());
    }

    #[test]
    fn a_file_that_cannot_be_read_is_named_and_not_written_over() {
        let path = scratch("broken");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "not json").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let private = std::fs::Permissions::from_mode(0o600);
            std::fs::set_permissions(&path, private).unwrap();
        }
        let file = KeptFile::new(path.clone());
        let why = file.read().err().expect("refused");
        assert!(why.contains(&path.display().to_string()) && why.contains("remove the file"));
        assert!(update(&file, |_| {}).is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "not json");
        let _ = std::fs::remove_dir_all(path.parent().unwrap().parent().unwrap());
    }

    fn registration(client_id: &str) -> KeptIdentity {
        let identity = Identity {
            client_id: client_id.to_owned(),
            secret: None,
            method: Method::None,
        };
        KeptIdentity::of(&identity, "client_credentials", "https://t/token", None)
    }

    /// An update that waits as long as a test may for its turn.
    fn update(file: &KeptFile, change: impl FnOnce(&mut Kept)) -> Result<(), String> {
        file.update_within(change, Duration::from_secs(120))
    }

    /// The file's lock, taken as another program would take it.
    fn held_elsewhere(path: &Path) -> std::fs::File {
        let lock = std::fs::File::open(super::super::turns::lock_path(path)).unwrap();
        lock.lock().unwrap();
        lock
    }

    #[test]
    fn updates_at_once_in_one_process_take_turns_and_none_is_lost() {
        let path = scratch("turns");
        let writers: Vec<_> = (0..2)
            .map(|writer| {
                let file = KeptFile::new(path.clone());
                std::thread::spawn(move || {
                    for update_number in 0..20 {
                        let key = format!("{writer}-{update_number}");
                        update(&file, |kept| {
                            kept.registrations.insert(key.clone(), registration(&key));
                        })
                        .unwrap();
                    }
                })
            })
            .collect();
        for writer in writers {
            writer.join().unwrap();
        }
        let kept = KeptFile::new(path.clone()).read().unwrap();
        assert_eq!(kept.registrations.len(), 40, "every update stays");
        let _ = std::fs::remove_dir_all(path.parent().unwrap().parent().unwrap());
    }

    #[test]
    fn an_update_waits_for_another_programs_and_keeps_what_it_wrote() {
        let path = scratch("other");
        let file = KeptFile::new(path.clone());
        update(&file, |_| {}).unwrap();
        let other = held_elsewhere(&path);
        let waiting = {
            let file = file.clone();
            std::thread::spawn(move || {
                update(&file, |kept| {
                    kept.registrations
                        .insert("ours".to_owned(), registration("ours"));
                })
            })
        };
        // The other program writes while it holds the lock; the update, which cannot have
        // ended (it waits for the lock), must read what it wrote. Without the lock it would
        // end within this second, and its write would be lost to the other's.
        let until = Instant::now() + Duration::from_secs(1);
        while !waiting.is_finished() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        let mut theirs = Kept::default();
        theirs
            .registrations
            .insert("theirs".to_owned(), registration("theirs"));
        let text = serde_json::to_string(&theirs).unwrap();
        write_private(&path, text.as_bytes()).unwrap();
        drop(other);
        waiting.join().unwrap().unwrap();
        let kept = file.read().unwrap();
        let keys: Vec<&String> = kept.registrations.keys().collect();
        assert_eq!(keys, ["ours", "theirs"]);
        let _ = std::fs::remove_dir_all(path.parent().unwrap().parent().unwrap());
    }

    #[test]
    fn an_update_while_another_program_never_ends_gives_up_named_and_writes_nothing() {
        let path = scratch("stuck");
        let file = KeptFile::new(path.clone());
        update(&file, |kept| {
            kept.registrations
                .insert("first".to_owned(), registration("first"));
        })
        .unwrap();
        let stuck = held_elsewhere(&path);
        let why = file
            .update_within(|kept| kept.registrations.clear(), Duration::from_millis(50))
            .expect_err("gave up");
        assert!(
            why.contains("another program has held") && why.contains("oauth.json.lock"),
            "{why}"
        );
        drop(stuck);
        assert_eq!(file.read().unwrap().registrations.len(), 1);
        update(&file, |kept| kept.registrations.clear()).unwrap();
        assert!(file.read().unwrap().registrations.is_empty());
        let _ = std::fs::remove_dir_all(path.parent().unwrap().parent().unwrap());
    }

    #[cfg(unix)]
    #[test]
    fn a_lock_file_left_as_a_link_to_nowhere_is_not_created_through() {
        let path = scratch("link");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let target = path.with_file_name("planted");
        std::os::unix::fs::symlink(&target, super::super::turns::lock_path(&path)).unwrap();
        let why = update(&KeptFile::new(path.clone()), |_| {}).expect_err("refused");
        assert!(why.contains("oauth.json.lock"), "{why}");
        assert!(!target.exists(), "nothing created where the link points");
        let _ = std::fs::remove_dir_all(path.parent().unwrap().parent().unwrap());
    }
}
