//! Externally tagged enums written the way people write YAML.
//!
//! yaml_serde reads an enum variant with data only from a YAML tag
//! (`pattern: !random {rounds: 3}`). Inventories and suites are written by
//! network engineers who expect `pattern: {random: {rounds: 3}}`, so these
//! adapters accept all three forms: a plain string for a unit variant
//! (`rail-pairs`), a single-key map, or a tag. Errors keep the parser's
//! position because every nested value is read through the same deserializer.
//! Use with `#[serde(deserialize_with = "tagged::one")]` (or `option`, `vec`).

use serde::de::value::{EnumAccessDeserializer, MapAccessDeserializer, StrDeserializer};
use serde::de::{self, DeserializeSeed, Deserializer, Visitor};
use std::fmt;
use std::marker::PhantomData;

struct TaggedVisitor<T>(PhantomData<T>);

impl<'de, T: de::Deserialize<'de>> Visitor<'de> for TaggedVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a name, or a map with one key naming the variant")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        T::deserialize(StrDeserializer::<E>::new(v))
    }

    fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::deserialize(MapAccessDeserializer::new(map))
    }

    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<T, A::Error> {
        T::deserialize(EnumAccessDeserializer::new(data))
    }
}

struct TaggedSeed<T>(PhantomData<T>);

impl<'de, T: de::Deserialize<'de>> DeserializeSeed<'de> for TaggedSeed<T> {
    type Value = T;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<T, D::Error> {
        one(d)
    }
}

pub fn one<'de, D: Deserializer<'de>, T: de::Deserialize<'de>>(d: D) -> Result<T, D::Error> {
    d.deserialize_any(TaggedVisitor(PhantomData))
}

pub fn option<'de, D: Deserializer<'de>, T: de::Deserialize<'de>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    struct V<T>(PhantomData<T>);
    impl<'de, T: de::Deserialize<'de>> Visitor<'de> for V<T> {
        type Value = Option<T>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a name, a map with one key naming the variant, or nothing")
        }
        fn visit_none<E: de::Error>(self) -> Result<Option<T>, E> {
            Ok(None)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Option<T>, E> {
            Ok(None)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Option<T>, D::Error> {
            one(d).map(Some)
        }
    }
    d.deserialize_option(V(PhantomData))
}

pub fn vec<'de, D: Deserializer<'de>, T: de::Deserialize<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    struct V<T>(PhantomData<T>);
    impl<'de, T: de::Deserialize<'de>> Visitor<'de> for V<T> {
        type Value = Vec<T>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a list")
        }
        fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
            let mut out = Vec::new();
            while let Some(v) = seq.next_element_seed(TaggedSeed(PhantomData))? {
                out.push(v);
            }
            Ok(out)
        }
    }
    d.deserialize_seq(V(PhantomData))
}

#[cfg(test)]
mod tests {
    use crate::config::suite::{Pattern, TestSpec};

    fn pattern(yaml: &str) -> Result<Option<Pattern>, String> {
        serde_yaml::from_str::<TestSpec>(&format!("name: t\npattern: {yaml}\n"))
            .map(|t| t.pattern)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn accepts_string_map_and_tag() {
        assert!(matches!(
            pattern("rail-pairs").unwrap(),
            Some(Pattern::RailPairs)
        ));
        assert!(
            matches!(pattern("{random: {rounds: 3}}").unwrap(), Some(Pattern::Random(r)) if r.rounds == 3)
        );
        assert!(
            matches!(pattern("!incast {senders: 4}").unwrap(), Some(Pattern::Incast(i)) if i.senders == 4)
        );
    }

    #[test]
    fn errors_name_the_variants_and_the_place() {
        let e = pattern("rail-pair").unwrap_err();
        assert!(
            e.contains("unknown variant `rail-pair`") && e.contains("rail-pairs"),
            "{e}"
        );
        assert!(e.contains("line 2"), "{e}");
        let e = pattern("{random: {rounds: 3, sed: 1}}").unwrap_err();
        assert!(e.contains("unknown field `sed`"), "{e}");
    }
}
