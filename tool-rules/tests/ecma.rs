//! The `pattern` translation against a real ECMA-262 engine (`regress`, with the `u` flag:
//! JSON Schema patterns have Unicode semantics): every pattern the translation accepts
//! matches exactly the texts the engine matches, on chosen patterns (those of the
//! JSON-Schema-Test-Suite's pattern files among them) and on generated ones; what it
//! refuses, it refuses with a reason, and only for what it cannot run.

use tool_rules::Pattern;

/// Texts that sit on the edges where the two dialects differ: line terminators, Unicode
/// spaces and digits, letters outside ASCII, characters outside the BMP.
const TEXTS: [&str; 34] = [
    "", "a", "aa", "abc", "ABC", "ab", "abab", "xz", "_", "1", "123", "\u{0663}", "é", "É",
    "\u{0130}", " ", "\t", "\n", "\r", "\u{00a0}", "\u{2028}", "\u{2029}", "\u{feff}", "\u{3000}",
    "🐲", "🐲🐲", "a\nb", "word", "x word y", "a-b", "/", "\\", "[]", "\u{85}",
];

/// Patterns chosen for what the translation rewrites, and the suite's own.
const PATTERNS: [&str; 58] = [
    "^a*$",
    "a+",
    "^[a-z]+$",
    r"\d",
    r"^\d+$",
    r"\s",
    r"^\s$",
    r"\w",
    r"^\w+$",
    r"\D",
    r"\S",
    r"\W",
    ".",
    "^.$",
    "^..$",
    "[^]",
    "[^a]",
    r"\u0041",
    r"^\u00e9$",
    r"^\u{1F432}$",
    "^🐲*$",
    "^🐲$",
    "a|b",
    "^(ab)+$",
    "(?:x|y)z",
    "^$",
    r"\bword\b",
    r"\Bor",
    r"[\s\S]",
    r"[^\d]",
    r"[^\s]",
    r"[\w-]",
    r"^[\d\s]+$",
    r"\x41",
    r"\t",
    r"\n",
    r"\/",
    r"\\",
    r"\[\]",
    "a{2}",
    "^a{2,}$",
    "^a{1,2}$",
    "^a?b?$",
    "^[a-c]*$",
    "^[^a-c]*$",
    "^[é-ê]$",
    "(a)|b",
    "^(?:a|ab)c?$",
    r"^\S+$",
    "^ *$",
    r"[\u2028]",
    r"[\b]",
    r"^\0?$",
    "^[.]$",
    r"^\.$",
    "a*?b",
    "^(a+)+$",
    r"^[\^]$",
];

fn engine(pattern: &str) -> Option<regress::Regex> {
    regress::Regex::with_flags(pattern, "u").ok()
}

/// The first text on which the translation and the engine differ.
fn difference(
    pattern: &str,
    ours: &Pattern,
    theirs: &regress::Regex,
    texts: &[String],
) -> Option<String> {
    texts.iter().find_map(|text| {
        let (a, b) = (ours.is_match(text), theirs.find(text).is_some());
        (a != b).then(|| format!("{pattern:?} on {text:?}: ours {a}, ECMA-262 {b}"))
    })
}

fn texts() -> Vec<String> {
    TEXTS.iter().map(|text| (*text).to_owned()).collect()
}

#[test]
fn chosen_patterns_match_as_ecma_262_says() {
    let texts = texts();
    let mut differences = Vec::new();
    for pattern in PATTERNS {
        let theirs = engine(pattern).unwrap_or_else(|| panic!("{pattern:?} is ECMA-262"));
        match Pattern::new(pattern) {
            Ok(ours) => differences.extend(difference(pattern, &ours, &theirs, &texts)),
            Err(why) => differences.push(format!("{pattern:?} refused: {why}")),
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

#[test]
fn what_cannot_be_run_is_refused_with_a_reason() {
    for (pattern, reason) in [
        ("a(?=b)", "look"),
        ("(?<!a)b", "look"),
        (r"(a)\1", "back-reference"),
        (r"\p{Letter}", "Unicode property"),
        (r"\P{L}", "Unicode property"),
        (r"(?<name>a)\k<name>", "back-reference"),
    ] {
        assert!(engine(pattern).is_some(), "{pattern:?} is ECMA-262");
        let why = Pattern::new(pattern).expect_err(pattern);
        assert!(why.contains(reason), "{pattern:?}: {why}");
    }
}

/// A small generator (xorshift), so that a failure is the same on every run.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[(self.next() % from.len() as u64) as usize]
    }

    fn pattern(&mut self, depth: u32) -> String {
        const ATOMS: [&str; 24] = [
            "a",
            "b",
            "1",
            ".",
            r"\d",
            r"\s",
            r"\w",
            r"\D",
            r"\S",
            r"\W",
            "[ab]",
            "[^a]",
            "[a-c]",
            r"[\d\s]",
            r"[^\w]",
            "é",
            "🐲",
            r"\u00e9",
            r"\u{1F432}",
            " ",
            r"\n",
            "[é🐲]",
            r"\b",
            "-",
        ];
        const QUANTIFIERS: [&str; 8] = ["", "", "", "*", "+", "?", "{1,2}", "*?"];
        let mut out = String::new();
        if self.next().is_multiple_of(4) {
            out.push('^');
        }
        for _ in 0..1 + self.next() % 4 {
            if depth < 2 && self.next().is_multiple_of(6) {
                let inner = self.pattern(depth + 1);
                let other = self.pattern(depth + 1);
                // A group repeated without bound over parts that repeat makes a
                // backtracking engine (the reference's too) take exponential time and
                // memory; the translation is tested on bounded repeats of groups.
                let repeat = self.pick(&["", "?", "{1,2}"]);
                out.push_str(&format!("(?:{inner}|{other}){repeat}"));
                continue;
            }
            let atom = self.pick(&ATOMS);
            out.push_str(atom);
            if atom != r"\b" {
                out.push_str(self.pick(&QUANTIFIERS));
            }
        }
        if self.next().is_multiple_of(4) {
            out.push('$');
        }
        out
    }

    fn text(&mut self) -> String {
        const CHARS: [&str; 14] = [
            "a", "b", "c", "1", " ", "\n", "\u{a0}", "é", "🐲", "\u{663}", "_", "A", "\u{2028}",
            "-",
        ];
        (0..self.next() % 6).map(|_| self.pick(&CHARS)).collect()
    }
}

#[test]
fn generated_patterns_match_as_ecma_262_says() {
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    let mut compared = 0;
    for _ in 0..4_000 {
        let pattern = random.pattern(0);
        let Some(theirs) = engine(&pattern) else {
            continue;
        };
        let ours = Pattern::new(&pattern).unwrap_or_else(|why| {
            panic!("{pattern:?} refused, though it is plain ECMA-262: {why}")
        });
        let mut texts = texts();
        texts.extend((0..24).map(|_| random.text()));
        if let Some(difference) = difference(&pattern, &ours, &theirs, &texts) {
            panic!("{difference}");
        }
        compared += 1;
    }
    assert!(
        compared > 3_000,
        "only {compared} patterns compiled by the engine"
    );
}
