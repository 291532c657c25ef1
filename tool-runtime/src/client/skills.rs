//! Agent skills a server offers (the `io.modelcontextprotocol/skills` extension): each a
//! `SKILL.md` with YAML frontmatter (its name and description) and files beside it, listed
//! with each file's size and SHA-256 digest, read as resources. Nothing is read before it
//! is needed, and whatever is read is checked against the listing before it is used: its
//! size, its digest, and for `SKILL.md` its frontmatter, field by field. Content that does
//! not match is refused, so a server cannot swap a skill after it was listed and approved.

use super::{Client, ClientError};
use base64::Engine;
use serde_json::{json, Map, Value};
use sha2::Digest;

/// A skill, as the server lists it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Skill {
    /// The URI of its `SKILL.md`.
    pub uri: String,
    /// Its `SKILL.md`'s frontmatter (name, description, ...), as listed.
    pub frontmatter: Value,
    /// Every file of the skill, `SKILL.md` included.
    pub files: Vec<SkillFile>,
}

/// A file of a skill, as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SkillFile {
    /// Its URI.
    pub uri: String,
    /// `sha256:` and the hex digest of its bytes.
    pub digest: String,
    /// Its size in bytes.
    pub size: u64,
}

impl Skill {
    /// Its name, from the frontmatter.
    pub fn name(&self) -> &str {
        self.frontmatter["name"].as_str().unwrap_or_default()
    }

    /// Its description, from the frontmatter.
    pub fn description(&self) -> &str {
        self.frontmatter["description"].as_str().unwrap_or_default()
    }

    fn from_value(listed: &Value) -> Option<Skill> {
        let files = listed["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|file| {
                Some(SkillFile {
                    uri: file["uri"].as_str()?.to_owned(),
                    digest: file["digest"].as_str()?.to_owned(),
                    size: file["size"].as_u64()?,
                })
            })
            .collect();
        Some(Skill {
            uri: listed["uri"].as_str()?.to_owned(),
            frontmatter: listed["frontmatter"].clone(),
            files,
        })
    }
}

impl Client {
    /// The skills the server offers (`skills/list`, every page); nothing of them is read.
    pub async fn list_skills(&self) -> Result<Vec<Skill>, ClientError> {
        let mut skills = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let params = match &cursor {
                Some(cursor) => json!({"cursor": cursor}),
                None => json!({}),
            };
            let page = self.request("skills/list", params).await?;
            let listed = page["skills"]
                .as_array()
                .ok_or_else(|| ClientError::protocol("skills/list gave no \"skills\" list"))?;
            skills.extend(listed.iter().filter_map(Skill::from_value));
            cursor = page["nextCursor"].as_str().map(str::to_owned);
            if cursor.is_none() {
                return Ok(skills);
            }
        }
    }

    /// Loads `skill`: its `SKILL.md`, checked against the listing (size, digest, and its
    /// frontmatter field by field); its text.
    pub async fn load_skill(&self, skill: &Skill) -> Result<String, ClientError> {
        let bytes = self.read_skill_file(skill, &skill.uri).await?;
        let text =
            String::from_utf8(bytes).map_err(|_| unverified(&skill.uri, "it is not UTF-8 text"))?;
        let found = frontmatter(&text).map_err(|why| unverified(&skill.uri, &why))?;
        if found != skill.frontmatter {
            return Err(unverified(
                &skill.uri,
                &format!(
                    "its frontmatter {found} is not the one listed, {}",
                    skill.frontmatter
                ),
            ));
        }
        Ok(text)
    }

    /// The bytes of the file `uri` of `skill`, checked against the listing (a file the
    /// listing does not name is not read).
    pub async fn read_skill_file(&self, skill: &Skill, uri: &str) -> Result<Vec<u8>, ClientError> {
        let listed = skill
            .files
            .iter()
            .find(|file| file.uri == uri)
            .ok_or_else(|| unverified(uri, "the skill's listing does not name it"))?;
        let read = self.read_resource(uri).await?;
        let content = &read["contents"][0];
        let bytes = match (content["text"].as_str(), content["blob"].as_str()) {
            (Some(text), _) => text.as_bytes().to_vec(),
            (None, Some(blob)) => base64::engine::general_purpose::STANDARD
                .decode(blob)
                .map_err(|_| unverified(uri, "its blob is not base64"))?,
            (None, None) => return Err(unverified(uri, "the server sent no content")),
        };
        if bytes.len() as u64 != listed.size {
            return Err(unverified(
                uri,
                &format!(
                    "it is {} bytes, the listing says {}",
                    bytes.len(),
                    listed.size
                ),
            ));
        }
        let digest = format!("sha256:{:x}", sha2::Sha256::digest(&bytes));
        if !digest.eq_ignore_ascii_case(&listed.digest) {
            return Err(unverified(
                uri,
                &format!("its digest is {digest}, the listing says {}", listed.digest),
            ));
        }
        Ok(bytes)
    }
}

fn unverified(uri: &str, why: &str) -> ClientError {
    ClientError::Unverified {
        uri: uri.to_owned(),
        reason: why.to_owned(),
    }
}

/// The YAML frontmatter of a `SKILL.md` (between its first two `---` lines), as JSON.
fn frontmatter(text: &str) -> Result<Value, String> {
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
        .ok_or("it does not start with frontmatter (`---`)")?;
    let end = rest
        .find("\n---")
        .ok_or("its frontmatter does not end (`---`)")?;
    use saphyr::LoadableYamlNode;
    let documents = saphyr::YamlOwned::load_from_str(&rest[..end])
        .map_err(|error| format!("its frontmatter is not YAML: {error}"))?;
    match documents.first() {
        Some(document) => Ok(to_json(document)),
        None => Ok(Value::Object(Map::new())),
    }
}

/// A YAML node as JSON (keys as text).
fn to_json(node: &saphyr::YamlOwned) -> Value {
    use saphyr::{ScalarOwned, YamlOwned};
    match node {
        YamlOwned::Value(ScalarOwned::Null) => Value::Null,
        YamlOwned::Value(ScalarOwned::Boolean(value)) => Value::Bool(*value),
        YamlOwned::Value(ScalarOwned::Integer(value)) => json!(value),
        YamlOwned::Value(ScalarOwned::FloatingPoint(value)) => json!(value.into_inner()),
        YamlOwned::Value(ScalarOwned::String(value)) => Value::String(value.clone()),
        YamlOwned::Sequence(items) => Value::Array(items.iter().map(to_json).collect()),
        YamlOwned::Mapping(entries) => Value::Object(
            entries
                .iter()
                .map(|(key, value)| {
                    let key = match to_json(key) {
                        Value::String(text) => text,
                        other => other.to_string(),
                    };
                    (key, to_json(value))
                })
                .collect(),
        ),
        YamlOwned::Representation(text, _, _) => Value::String(text.clone()),
        YamlOwned::Tagged(_, inner) => to_json(inner),
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frontmatter_is_read_as_json_values() {
        let text = "---\nname: pdf\ndescription: \"Fill forms: fast\"\nversion: 2\ntags: [a, b]\nmetadata:\n  owner: ops\n---\n# Body\n";
        assert_eq!(
            frontmatter(text).unwrap(),
            json!({"name": "pdf", "description": "Fill forms: fast", "version": 2,
                "tags": ["a", "b"], "metadata": {"owner": "ops"}})
        );
        assert!(frontmatter("# no frontmatter").is_err());
        assert!(frontmatter("---\nname: [unclosed\n---\n").is_err());
    }
}
