//! `*`-only wildcard matching, shared by rule specifiers and environment grants.
//!
//! Hand-rolled on purpose: both callers need exactly "`*` matches any run of characters, everything
//! else is literal", and glob crates add classes, alternatives and separators that would widen what
//! a pattern grants. The matcher is iterative with single-star backtracking: O(pattern × text) in
//! the worst case, never exponential, no recursion.

/// True when `text` matches `pattern`.
#[inline]
pub fn matches(pattern: &str, text: &str) -> bool {
    let (pattern, text) = (pattern.as_bytes(), text.as_bytes());
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && pattern[p] != b'*' && pattern[p] == text[t] {
            p += 1;
            t += 1;
        } else if p < pattern.len() && pattern[p] == b'*' {
            star = Some((p, t));
            p += 1;
        } else if let Some((star_p, star_t)) = star {
            p = star_p + 1;
            t = star_t + 1;
            star = Some((star_p, star_t + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcard_table() {
        let cases = [
            ("", "", true),
            ("", "a", false),
            ("*", "", true),
            ("*", "anything/at all", true),
            ("a*", "a", true),
            ("a*", "ba", false),
            ("*.env", "/ws/.env", true),
            ("*.env", "/ws/.env.bak", false),
            ("a*b*c", "axxbyyc", true),
            ("a*b*c", "axxbyy", false),
            ("**", "x", true),
            ("LC_*", "LC_ALL", true),
        ];
        for (pattern, text, expected) in cases {
            assert_eq!(matches(pattern, text), expected, "{pattern:?} vs {text:?}");
        }
    }

    #[test]
    fn adversarial_patterns_finish() {
        let pattern = format!("{}B", "A*".repeat(40));
        let text = "A".repeat(5000);
        assert!(!matches(&pattern, &text));
    }
}
