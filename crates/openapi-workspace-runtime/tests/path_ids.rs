//! A path's id has one spelling: `canonical_uuid` takes the lower-case hyphenated form of a UUID
//! and nothing else, whichever of its characters is spelled otherwise.
use openapi_workspace_runtime::canonical_uuid;

#[test]
fn only_the_lower_case_hyphenated_spelling_is_an_id() {
    let text = "5dfbb19d-adb8-4abc-b0dc-f2af5490eff0";
    let id = uuid::Uuid::parse_str(text).unwrap();
    assert_eq!(canonical_uuid(text), Some(id));
    // Any one letter in upper case, wherever it is among the 36 characters.
    for (at, letter) in text.char_indices().filter(|(_, c)| c.is_ascii_alphabetic()) {
        let mut spelled = text.to_owned();
        spelled.replace_range(at..at + 1, &letter.to_ascii_uppercase().to_string());
        assert_eq!(canonical_uuid(&spelled), None, "{spelled}");
    }
    let others = [
        id.simple().to_string(),
        format!("{{{text}}}"),
        format!("urn:uuid:{text}"),
        text.replace('-', "_"),
        format!("{}g", &text[..35]),
        format!("{}é", &text[..34]),
        String::new(),
    ];
    for other in others {
        assert_eq!(canonical_uuid(&other), None, "{other}");
    }
}
