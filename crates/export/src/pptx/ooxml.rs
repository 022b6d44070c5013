//! The deck as a PowerPoint file (Office Open XML, ECMA-376), written by hand: one slide master
//! with one "title only" layout, a theme, a notes master, one slide and one notes page per deck
//! slide, pictures under `ppt/media`, and the package's content types, relationships and
//! document properties. Every part this writes is listed in `[Content_Types].xml` from the same
//! list the zip is written from, so the two cannot disagree.

use std::fmt::Write as _;

use super::xml::{escape, push_escaped};
use super::{
    Align, Anchor, Bullet, Color, Deck, DeckItem, DeckSlide, DeckWriter, Geometry, Group, Line,
    Paragraph, Picture, Run, Shape, ShapeRole, Stroke, Table, TextBody, Typeface, SLIDE_HEIGHT_EMU,
    SLIDE_WIDTH_EMU, TABLE_CELL_MARGIN_X_EMU, TABLE_CELL_MARGIN_Y_EMU,
};
use crate::zip::ZipWriter;

const NS: &str = r#"xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main""#;
const NS_A: &str = "http://schemas.openxmlformats.org/drawingml/2006/main";
const XML_HEADER: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n";

const REL: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
const REL_CORE: &str =
    "http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties";

const CT_PML: &str = "application/vnd.openxmlformats-officedocument.presentationml";
const CT_RELS: &str = "application/vnd.openxmlformats-package.relationships+xml";
const CT_THEME: &str = "application/vnd.openxmlformats-officedocument.theme+xml";
const CT_CORE: &str = "application/vnd.openxmlformats-package.core-properties+xml";
const CT_APP: &str = "application/vnd.openxmlformats-officedocument.extended-properties+xml";

const BODY_FONT: &str = "Calibri";
const MONOSPACE_FONT: &str = "Courier New";
const MATH_FONT: &str = "Cambria Math";

/// Writes `.pptx` files. `modified_ms` (Unix milliseconds) is the document's modification time
/// and every zip entry's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PptxWriter {
    pub modified_ms: u64,
}

impl DeckWriter for PptxWriter {
    fn write(&self, deck: &Deck) -> Vec<u8> {
        let mut zip = ZipWriter::new(self.modified_ms);
        for part in package(deck, self.modified_ms) {
            zip.add(&part.path, &part.bytes);
        }
        zip.finish()
    }
}

/// One file of the package.
pub(crate) struct Part {
    pub path: String,
    /// `None` for media, whose type comes from the extension (a `Default` entry).
    pub content_type: Option<String>,
    pub bytes: Vec<u8>,
}

impl Part {
    fn xml(path: impl Into<String>, content_type: impl Into<String>, xml: String) -> Part {
        Part {
            path: path.into(),
            content_type: Some(content_type.into()),
            bytes: xml.into_bytes(),
        }
    }

    fn rels(path: impl Into<String>, rels: &[Rel]) -> Part {
        Part {
            path: path.into(),
            content_type: None,
            bytes: relationships(rels).into_bytes(),
        }
    }
}

struct Rel {
    id: String,
    kind: String,
    target: String,
}

fn rel(id: impl Into<String>, kind: &str, target: impl Into<String>) -> Rel {
    Rel {
        id: id.into(),
        kind: if kind.starts_with("http") {
            kind.to_string()
        } else {
            format!("{REL}/{kind}")
        },
        target: target.into(),
    }
}

fn relationships(rels: &[Rel]) -> String {
    let mut xml = String::from(XML_HEADER);
    xml.push_str(
        r#"<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">"#,
    );
    for r in rels {
        let _ = write!(
            xml,
            r#"<Relationship Id="{}" Type="{}" Target="{}"/>"#,
            r.id,
            r.kind,
            escape(&r.target)
        );
    }
    xml.push_str("</Relationships>");
    xml
}

/// Every part of the package, `[Content_Types].xml` first.
pub(crate) fn package(deck: &Deck, modified_ms: u64) -> Vec<Part> {
    let language = language_tag(&deck.language);
    let count = deck.slides.len();
    let mut parts = vec![
        Part::rels(
            "_rels/.rels",
            &[
                rel("rId1", "officeDocument", "ppt/presentation.xml"),
                rel("rId2", REL_CORE, "docProps/core.xml"),
                rel("rId3", "extended-properties", "docProps/app.xml"),
            ],
        ),
        Part::xml(
            "docProps/core.xml",
            CT_CORE,
            core_properties(deck, &language, modified_ms),
        ),
        Part::xml("docProps/app.xml", CT_APP, app_properties(count)),
        Part::xml(
            "ppt/presentation.xml",
            format!("{CT_PML}.presentation.main+xml"),
            presentation(count),
        ),
    ];
    let mut presentation_rels = vec![
        rel("rId1", "slideMaster", "slideMasters/slideMaster1.xml"),
        rel("rId2", "notesMaster", "notesMasters/notesMaster1.xml"),
        rel("rId3", "theme", "theme/theme1.xml"),
        rel("rId4", "presProps", "presProps.xml"),
        rel("rId5", "viewProps", "viewProps.xml"),
        rel("rId6", "tableStyles", "tableStyles.xml"),
    ];
    for n in 1..=count {
        presentation_rels.push(rel(
            format!("rId{}", n + 6),
            "slide",
            format!("slides/slide{n}.xml"),
        ));
    }
    parts.push(Part::rels(
        "ppt/_rels/presentation.xml.rels",
        &presentation_rels,
    ));
    parts.extend([
        Part::xml(
            "ppt/presProps.xml",
            format!("{CT_PML}.presProps+xml"),
            format!("{XML_HEADER}<p:presentationPr {NS}/>"),
        ),
        Part::xml(
            "ppt/viewProps.xml",
            format!("{CT_PML}.viewProps+xml"),
            format!(
                "{XML_HEADER}<p:viewPr {NS}><p:gridSpacing cx=\"76200\" cy=\"76200\"/></p:viewPr>"
            ),
        ),
        Part::xml(
            "ppt/tableStyles.xml",
            format!("{CT_PML}.tableStyles+xml"),
            format!(
                "{XML_HEADER}<a:tblStyleLst xmlns:a=\"{NS_A}\" def=\"{{5C22544A-7EE6-4342-B048-85BDC9FD1C3A}}\"/>"
            ),
        ),
        Part::xml("ppt/theme/theme1.xml", CT_THEME, theme(&language)),
        Part::xml("ppt/theme/theme2.xml", CT_THEME, theme(&language)),
        Part::xml(
            "ppt/slideMasters/slideMaster1.xml",
            format!("{CT_PML}.slideMaster+xml"),
            slide_master(),
        ),
        Part::rels(
            "ppt/slideMasters/_rels/slideMaster1.xml.rels",
            &[
                rel("rId1", "slideLayout", "../slideLayouts/slideLayout1.xml"),
                rel("rId2", "theme", "../theme/theme1.xml"),
            ],
        ),
        Part::xml(
            "ppt/slideLayouts/slideLayout1.xml",
            format!("{CT_PML}.slideLayout+xml"),
            slide_layout(),
        ),
        Part::rels(
            "ppt/slideLayouts/_rels/slideLayout1.xml.rels",
            &[rel("rId1", "slideMaster", "../slideMasters/slideMaster1.xml")],
        ),
        Part::xml(
            "ppt/notesMasters/notesMaster1.xml",
            format!("{CT_PML}.notesMaster+xml"),
            notes_master(),
        ),
        Part::rels(
            "ppt/notesMasters/_rels/notesMaster1.xml.rels",
            &[rel("rId1", "theme", "../theme/theme2.xml")],
        ),
    ]);
    for (index, slide) in deck.slides.iter().enumerate() {
        let n = index + 1;
        let mut pictures = Vec::new();
        let xml = slide_xml(slide, &language, &mut pictures);
        parts.push(Part::xml(
            format!("ppt/slides/slide{n}.xml"),
            format!("{CT_PML}.slide+xml"),
            xml,
        ));
        let mut rels = vec![
            rel("rId1", "slideLayout", "../slideLayouts/slideLayout1.xml"),
            rel(
                "rId2",
                "notesSlide",
                format!("../notesSlides/notesSlide{n}.xml"),
            ),
        ];
        for (k, media) in pictures.iter().enumerate() {
            if let Some(m) = deck.media.get(*media) {
                rels.push(rel(
                    format!("rId{}", k + 3),
                    "image",
                    format!("../media/image{}.{}", media + 1, m.format.extension()),
                ));
            }
        }
        parts.push(Part::rels(
            format!("ppt/slides/_rels/slide{n}.xml.rels"),
            &rels,
        ));
        parts.push(Part::xml(
            format!("ppt/notesSlides/notesSlide{n}.xml"),
            format!("{CT_PML}.notesSlide+xml"),
            notes_slide(&slide.notes, &language),
        ));
        parts.push(Part::rels(
            format!("ppt/notesSlides/_rels/notesSlide{n}.xml.rels"),
            &[
                rel("rId1", "notesMaster", "../notesMasters/notesMaster1.xml"),
                rel("rId2", "slide", format!("../slides/slide{n}.xml")),
            ],
        ));
    }
    for (index, media) in deck.media.iter().enumerate() {
        parts.push(Part {
            path: format!("ppt/media/image{}.{}", index + 1, media.format.extension()),
            content_type: None,
            bytes: media.bytes.clone(),
        });
    }
    let types = content_types(&parts, deck);
    parts.insert(
        0,
        Part {
            path: "[Content_Types].xml".into(),
            content_type: None,
            bytes: types.into_bytes(),
        },
    );
    parts
}

fn content_types(parts: &[Part], deck: &Deck) -> String {
    let mut xml = String::from(XML_HEADER);
    xml.push_str(r#"<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">"#);
    let _ = write!(
        xml,
        r#"<Default Extension="rels" ContentType="{CT_RELS}"/><Default Extension="xml" ContentType="application/xml"/>"#
    );
    let mut formats: Vec<_> = deck.media.iter().map(|m| m.format).collect();
    formats.sort_by_key(|f| f.extension());
    formats.dedup();
    for format in formats {
        let _ = write!(
            xml,
            r#"<Default Extension="{}" ContentType="{}"/>"#,
            format.extension(),
            format.content_type()
        );
    }
    for part in parts {
        if let Some(content_type) = &part.content_type {
            let _ = write!(
                xml,
                r#"<Override PartName="/{}" ContentType="{content_type}"/>"#,
                part.path
            );
        }
    }
    xml.push_str("</Types>");
    xml
}

/// The deck's language as a tag PowerPoint accepts in `lang`, or empty.
fn language_tag(language: &str) -> String {
    let tag = language.trim();
    let ok = !tag.is_empty()
        && tag.len() <= 35
        && tag.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        && tag.chars().next().is_some_and(|c| c.is_ascii_alphabetic());
    if ok {
        tag.to_string()
    } else {
        String::new()
    }
}

/// A typeface for East Asian text in the deck's language, which viewers without it replace with
/// a local font of the same script.
fn east_asian_font(language: &str) -> &'static str {
    let primary = language
        .split('-')
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    match primary.as_str() {
        "zh" => "Microsoft YaHei",
        "ja" => "Yu Gothic",
        "ko" => "Malgun Gothic",
        _ => "",
    }
}

/// Unix milliseconds as a W3C date-time in UTC.
fn w3c_date(ms: u64) -> String {
    let seconds = ms / 1000;
    let days = (seconds / 86_400) as i64;
    let of_day = seconds % 86_400;
    // Days since 1970-01-01 to a civil date (proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60
    )
}

fn core_properties(deck: &Deck, language: &str, modified_ms: u64) -> String {
    let mut xml = String::from(XML_HEADER);
    xml.push_str(r#"<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" xmlns:dcmitype="http://purl.org/dc/dcmitype/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">"#);
    let _ = write!(xml, "<dc:title>{}</dc:title>", escape(&deck.title));
    xml.push_str("<dc:creator>Aula</dc:creator>");
    if !language.is_empty() {
        let _ = write!(xml, "<dc:language>{language}</dc:language>");
    }
    let _ = write!(
        xml,
        r#"<dcterms:created xsi:type="dcterms:W3CDTF">{}</dcterms:created><dcterms:modified xsi:type="dcterms:W3CDTF">{}</dcterms:modified>"#,
        w3c_date(deck.created_ms),
        w3c_date(modified_ms)
    );
    xml.push_str("</cp:coreProperties>");
    xml
}

fn app_properties(slides: usize) -> String {
    format!(
        r#"{XML_HEADER}<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties" xmlns:vt="http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes"><Application>Aula</Application><PresentationFormat>Widescreen</PresentationFormat><Slides>{slides}</Slides><Notes>{slides}</Notes></Properties>"#
    )
}

fn presentation(slides: usize) -> String {
    let mut xml = String::from(XML_HEADER);
    let _ = write!(xml, r#"<p:presentation {NS} saveSubsetFonts="1">"#);
    xml.push_str(
        r#"<p:sldMasterIdLst><p:sldMasterId id="2147483648" r:id="rId1"/></p:sldMasterIdLst>"#,
    );
    xml.push_str(r#"<p:notesMasterIdLst><p:notesMasterId r:id="rId2"/></p:notesMasterIdLst>"#);
    if slides > 0 {
        xml.push_str("<p:sldIdLst>");
        for n in 0..slides {
            let _ = write!(xml, r#"<p:sldId id="{}" r:id="rId{}"/>"#, 256 + n, n + 7);
        }
        xml.push_str("</p:sldIdLst>");
    }
    let _ = write!(
        xml,
        r#"<p:sldSz cx="{SLIDE_WIDTH_EMU}" cy="{SLIDE_HEIGHT_EMU}"/><p:notesSz cx="6858000" cy="9144000"/>"#
    );
    xml.push_str("<p:defaultTextStyle>");
    xml.push_str(&level_style(1, 1800));
    xml.push_str("</p:defaultTextStyle></p:presentation>");
    xml
}

/// `a:lvlNpPr` with the theme's fonts at `size`.
fn level_style(level: u8, size: u32) -> String {
    format!(
        r#"<a:lvl{level}pPr marL="0" algn="l" defTabSz="914400" rtl="0" eaLnBrk="1" latinLnBrk="0" hangingPunct="1"><a:defRPr sz="{size}" kern="1200"><a:solidFill><a:schemeClr val="tx1"/></a:solidFill><a:latin typeface="+mn-lt"/><a:ea typeface="+mn-ea"/><a:cs typeface="+mn-cs"/></a:defRPr></a:lvl{level}pPr>"#
    )
}

const GROUP_ROOT: &str = r#"<p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="0" cy="0"/><a:chOff x="0" y="0"/><a:chExt cx="0" cy="0"/></a:xfrm></p:grpSpPr>"#;
const CLR_MAP: &str = r#"<p:clrMap bg1="lt1" tx1="dk1" bg2="lt2" tx2="dk2" accent1="accent1" accent2="accent2" accent3="accent3" accent4="accent4" accent5="accent5" accent6="accent6" hlink="hlink" folHlink="folHlink"/>"#;

fn placeholder(id: u32, name: &str, kind: &str, frame: Option<(i64, i64, i64, i64)>) -> String {
    let xfrm = frame
        .map(|(x, y, cx, cy)| {
            format!(r#"<a:xfrm><a:off x="{x}" y="{y}"/><a:ext cx="{cx}" cy="{cy}"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom>"#)
        })
        .unwrap_or_default();
    format!(
        r#"<p:sp><p:nvSpPr><p:cNvPr id="{id}" name="{name}"/><p:cNvSpPr><a:spLocks noGrp="1"/></p:cNvSpPr><p:nvPr>{kind}</p:nvPr></p:nvSpPr><p:spPr>{xfrm}</p:spPr><p:txBody><a:bodyPr/><a:lstStyle/><a:p><a:endParaRPr lang="en-US"/></a:p></p:txBody></p:sp>"#
    )
}

fn slide_master() -> String {
    let mut xml = String::from(XML_HEADER);
    let _ = write!(xml, "<p:sldMaster {NS}><p:cSld>");
    xml.push_str(
        r#"<p:bg><p:bgRef idx="1001"><a:schemeClr val="bg1"/></p:bgRef></p:bg><p:spTree>"#,
    );
    xml.push_str(GROUP_ROOT);
    xml.push_str(&placeholder(
        2,
        "Title Placeholder 1",
        r#"<p:ph type="title"/>"#,
        Some((487_680, 243_840, 11_216_640, 755_904)),
    ));
    xml.push_str(&placeholder(
        3,
        "Text Placeholder 2",
        r#"<p:ph type="body" idx="1"/>"#,
        Some((487_680, 1_170_432, 11_216_640, 5_120_640)),
    ));
    xml.push_str("</p:spTree></p:cSld>");
    xml.push_str(CLR_MAP);
    xml.push_str(
        r#"<p:sldLayoutIdLst><p:sldLayoutId id="2147483649" r:id="rId1"/></p:sldLayoutIdLst>"#,
    );
    xml.push_str("<p:txStyles><p:titleStyle>");
    xml.push_str(&level_style(1, 3200).replace("+mn-", "+mj-"));
    xml.push_str("</p:titleStyle><p:bodyStyle>");
    xml.push_str(&level_style(1, 2000));
    xml.push_str("</p:bodyStyle><p:otherStyle>");
    xml.push_str(&level_style(1, 1800));
    xml.push_str("</p:otherStyle></p:txStyles></p:sldMaster>");
    xml
}

fn slide_layout() -> String {
    let mut xml = String::from(XML_HEADER);
    let _ = write!(
        xml,
        r#"<p:sldLayout {NS} type="titleOnly" preserve="1"><p:cSld name="Title Only"><p:spTree>"#
    );
    xml.push_str(GROUP_ROOT);
    xml.push_str(&placeholder(2, "Title 1", r#"<p:ph type="title"/>"#, None));
    xml.push_str(
        "</p:spTree></p:cSld><p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:sldLayout>",
    );
    xml
}

fn notes_master() -> String {
    let mut xml = String::from(XML_HEADER);
    let _ = write!(xml, "<p:notesMaster {NS}><p:cSld>");
    xml.push_str(
        r#"<p:bg><p:bgRef idx="1001"><a:schemeClr val="bg1"/></p:bgRef></p:bg><p:spTree>"#,
    );
    xml.push_str(GROUP_ROOT);
    xml.push_str(
        r#"<p:sp><p:nvSpPr><p:cNvPr id="2" name="Slide Image Placeholder 1"/><p:cNvSpPr><a:spLocks noGrp="1" noRot="1" noChangeAspect="1"/></p:cNvSpPr><p:nvPr><p:ph type="sldImg"/></p:nvPr></p:nvSpPr><p:spPr><a:xfrm><a:off x="685800" y="1143000"/><a:ext cx="5486400" cy="3086100"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom><a:noFill/><a:ln w="12700"><a:solidFill><a:prstClr val="black"/></a:solidFill></a:ln></p:spPr></p:sp>"#
    );
    xml.push_str(&placeholder(
        3,
        "Notes Placeholder 2",
        r#"<p:ph type="body" sz="quarter" idx="1"/>"#,
        Some((685_800, 4_400_550, 5_486_400, 3_600_450)),
    ));
    xml.push_str("</p:spTree></p:cSld>");
    xml.push_str(CLR_MAP);
    xml.push_str("<p:notesStyle>");
    xml.push_str(&level_style(1, 1200));
    xml.push_str("</p:notesStyle></p:notesMaster>");
    xml
}

fn theme(language: &str) -> String {
    let ea = east_asian_font(language);
    let colors = [
        ("dk1", "1F2937"),
        ("lt1", "FFFFFF"),
        ("dk2", "0F172A"),
        ("lt2", "F8FAFC"),
        ("accent1", "4F7CFF"),
        ("accent2", "22B07D"),
        ("accent3", "F5A524"),
        ("accent4", "E5484D"),
        ("accent5", "8E6CEF"),
        ("accent6", "12A5C9"),
        ("hlink", "2563EB"),
        ("folHlink", "7C3AED"),
    ];
    let mut xml = String::from(XML_HEADER);
    let _ = write!(
        xml,
        r#"<a:theme xmlns:a="{NS_A}" name="Aula"><a:themeElements><a:clrScheme name="Aula">"#
    );
    for (name, hex) in colors {
        let _ = write!(xml, r#"<a:{name}><a:srgbClr val="{hex}"/></a:{name}>"#);
    }
    xml.push_str(r#"</a:clrScheme><a:fontScheme name="Aula">"#);
    for font in ["majorFont", "minorFont"] {
        let _ = write!(
            xml,
            r#"<a:{font}><a:latin typeface="{BODY_FONT}"/><a:ea typeface="{ea}"/><a:cs typeface=""/></a:{font}>"#
        );
    }
    xml.push_str(r#"</a:fontScheme><a:fmtScheme name="Aula"><a:fillStyleLst>"#);
    let ph_fill = r#"<a:solidFill><a:schemeClr val="phClr"/></a:solidFill>"#;
    xml.push_str(&ph_fill.repeat(3));
    xml.push_str("</a:fillStyleLst><a:lnStyleLst>");
    for width in [6350, 12700, 19050] {
        let _ = write!(xml, r#"<a:ln w="{width}">{ph_fill}</a:ln>"#);
    }
    xml.push_str("</a:lnStyleLst><a:effectStyleLst>");
    xml.push_str(&"<a:effectStyle><a:effectLst/></a:effectStyle>".repeat(3));
    xml.push_str("</a:effectStyleLst><a:bgFillStyleLst>");
    xml.push_str(&ph_fill.repeat(3));
    xml.push_str("</a:bgFillStyleLst></a:fmtScheme></a:themeElements><a:objectDefaults/><a:extraClrSchemeLst/></a:theme>");
    xml
}

/// Writes one slide's shapes, with ids unique on the slide and pictures numbered in
/// `pictures` (deck media indices, in the order of their relationship ids).
struct SlideWriter<'a> {
    xml: String,
    next_id: u32,
    language: &'a str,
    pictures: &'a mut Vec<usize>,
}

fn slide_xml(slide: &DeckSlide, language: &str, pictures: &mut Vec<usize>) -> String {
    let mut w = SlideWriter {
        xml: String::from(XML_HEADER),
        next_id: 2,
        language,
        pictures,
    };
    let _ = write!(w.xml, "<p:sld {NS}><p:cSld>");
    if let Some(background) = slide.background {
        let _ = write!(
            w.xml,
            r#"<p:bg><p:bgPr><a:solidFill><a:srgbClr val="{}"/></a:solidFill><a:effectLst/></p:bgPr></p:bg>"#,
            background.hex()
        );
    }
    w.xml.push_str("<p:spTree>");
    w.xml.push_str(GROUP_ROOT);
    for item in &slide.items {
        w.item(item);
    }
    w.xml
        .push_str("</p:spTree></p:cSld><p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:sld>");
    w.xml
}

fn solid_fill(out: &mut String, color: Color) {
    let _ = write!(out, r#"<a:solidFill><a:srgbClr val="{}""#, color.hex());
    if color.alpha < 255 {
        let _ = write!(
            out,
            r#"><a:alpha val="{}"/></a:srgbClr></a:solidFill>"#,
            color.alpha as u32 * 100_000 / 255
        );
    } else {
        out.push_str("/></a:solidFill>");
    }
}

fn xfrm(out: &mut String, x: i64, y: i64, cx: i64, cy: i64) {
    let _ = write!(
        out,
        r#"<a:xfrm><a:off x="{x}" y="{y}"/><a:ext cx="{cx}" cy="{cy}"/></a:xfrm>"#
    );
}

fn outline_xml(out: &mut String, outline: Option<&Stroke>, arrows: [bool; 2]) {
    let Some(outline) = outline else {
        out.push_str("<a:ln><a:noFill/></a:ln>");
        return;
    };
    let _ = write!(out, r#"<a:ln w="{}" cap="rnd">"#, outline.width_emu.max(0));
    solid_fill(out, outline.color);
    if outline.dashed {
        out.push_str(r#"<a:prstDash val="dash"/>"#);
    }
    out.push_str("<a:round/>");
    if arrows[0] {
        out.push_str(r#"<a:headEnd type="triangle" w="med" len="med"/>"#);
    }
    if arrows[1] {
        out.push_str(r#"<a:tailEnd type="triangle" w="med" len="med"/>"#);
    }
    out.push_str("</a:ln>");
}

impl SlideWriter<'_> {
    fn id(&mut self) -> u32 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    fn non_visual(&mut self, name: &str, description: &str) {
        let id = self.id();
        let _ = write!(self.xml, r#"<p:cNvPr id="{id}" name="{}""#, escape(name));
        if !description.trim().is_empty() {
            let _ = write!(self.xml, r#" descr="{}""#, escape(description));
        }
        self.xml.push_str("/>");
    }

    fn item(&mut self, item: &DeckItem) {
        match item {
            DeckItem::Shape(shape) => self.shape(shape),
            DeckItem::Line(line) => self.line(line),
            DeckItem::Picture(picture) => self.picture(picture),
            DeckItem::Table(table) => self.table(table),
            DeckItem::Group(group) => self.group(group),
        }
    }

    fn shape(&mut self, shape: &Shape) {
        self.xml.push_str("<p:sp><p:nvSpPr>");
        self.non_visual(&shape.name, &shape.description);
        match shape.role {
            ShapeRole::Title => self.xml.push_str(
                r#"<p:cNvSpPr><a:spLocks noGrp="1"/></p:cNvSpPr><p:nvPr><p:ph type="title"/></p:nvPr>"#,
            ),
            ShapeRole::TextBox => self
                .xml
                .push_str(r#"<p:cNvSpPr txBox="1"/><p:nvPr/>"#),
            ShapeRole::Drawing => self.xml.push_str("<p:cNvSpPr/><p:nvPr/>"),
        }
        self.xml.push_str("</p:nvSpPr><p:spPr>");
        let f = shape.frame;
        xfrm(&mut self.xml, f.x, f.y, f.cx, f.cy);
        self.geometry(&shape.geometry, f.cx, f.cy);
        match shape.fill {
            Some(fill) => solid_fill(&mut self.xml, fill),
            None => self.xml.push_str("<a:noFill/>"),
        }
        outline_xml(&mut self.xml, shape.outline.as_ref(), [false, false]);
        self.xml.push_str("</p:spPr>");
        match &shape.text {
            Some(body) => self.text_body(body, "p:txBody"),
            // A title placeholder always says something, even if empty.
            None if shape.role == ShapeRole::Title => self.text_body(
                &TextBody {
                    paragraphs: Vec::new(),
                    anchor: Anchor::Top,
                    inset_emu: 0,
                    wrap: true,
                },
                "p:txBody",
            ),
            None => {}
        }
        self.xml.push_str("</p:sp>");
    }

    fn geometry(&mut self, geometry: &Geometry, cx: i64, cy: i64) {
        let preset = match geometry {
            Geometry::Rectangle => "rect",
            Geometry::RoundedRectangle => "roundRect",
            Geometry::Ellipse => "ellipse",
            Geometry::Triangle => "triangle",
            Geometry::RightArrow => "rightArrow",
            Geometry::Path { points, closed } => {
                let _ = write!(
                    self.xml,
                    r#"<a:custGeom><a:avLst/><a:gdLst/><a:ahLst/><a:cxnLst/><a:rect l="0" t="0" r="r" b="b"/><a:pathLst><a:path w="{cx}" h="{cy}""#
                );
                if !closed {
                    self.xml.push_str(r#" fill="none""#);
                }
                self.xml.push('>');
                for (index, [x, y]) in points.iter().enumerate() {
                    let verb = if index == 0 { "moveTo" } else { "lnTo" };
                    let _ = write!(self.xml, r#"<a:{verb}><a:pt x="{x}" y="{y}"/></a:{verb}>"#);
                }
                if *closed {
                    self.xml.push_str("<a:close/>");
                }
                self.xml.push_str("</a:path></a:pathLst></a:custGeom>");
                return;
            }
        };
        let _ = write!(
            self.xml,
            r#"<a:prstGeom prst="{preset}"><a:avLst/></a:prstGeom>"#
        );
    }

    fn text_body(&mut self, body: &TextBody, tag: &str) {
        let anchor = match body.anchor {
            Anchor::Top => "t",
            Anchor::Middle => "ctr",
            Anchor::Bottom => "b",
        };
        let inset = body.inset_emu.max(0);
        let wrap = if body.wrap { "square" } else { "none" };
        let _ = write!(
            self.xml,
            r#"<{tag}><a:bodyPr wrap="{wrap}" lIns="{inset}" tIns="{inset}" rIns="{inset}" bIns="{inset}" anchor="{anchor}" rtlCol="0"><a:noAutofit/></a:bodyPr><a:lstStyle/>"#
        );
        self.paragraphs(&body.paragraphs);
        let _ = write!(self.xml, "</{tag}>");
    }

    fn paragraphs(&mut self, paragraphs: &[Paragraph]) {
        if paragraphs.is_empty() {
            self.xml.push_str("<a:p>");
            self.end_paragraph(None);
            self.xml.push_str("</a:p>");
        }
        for paragraph in paragraphs {
            paragraph_xml(&mut self.xml, paragraph, self.language);
        }
    }

    fn end_paragraph(&mut self, size: Option<u32>) {
        end_paragraph(&mut self.xml, size, self.language);
    }

    fn line(&mut self, line: &Line) {
        self.xml.push_str("<p:cxnSp><p:nvCxnSpPr>");
        self.non_visual(&line.name, "");
        self.xml
            .push_str("<p:cNvCxnSpPr/><p:nvPr/></p:nvCxnSpPr><p:spPr>");
        let [x1, y1] = line.from;
        let [x2, y2] = line.to;
        let _ = write!(self.xml, "<a:xfrm");
        if x1 > x2 {
            self.xml.push_str(r#" flipH="1""#);
        }
        if y1 > y2 {
            self.xml.push_str(r#" flipV="1""#);
        }
        let _ = write!(
            self.xml,
            r#"><a:off x="{}" y="{}"/><a:ext cx="{}" cy="{}"/></a:xfrm><a:prstGeom prst="line"><a:avLst/></a:prstGeom>"#,
            x1.min(x2),
            y1.min(y2),
            (x1 - x2).abs(),
            (y1 - y2).abs()
        );
        outline_xml(&mut self.xml, Some(&line.outline), line.arrows);
        self.xml.push_str("</p:spPr></p:cxnSp>");
    }

    fn picture(&mut self, picture: &Picture) {
        let index = match self.pictures.iter().position(|m| *m == picture.media) {
            Some(index) => index,
            None => {
                self.pictures.push(picture.media);
                self.pictures.len() - 1
            }
        };
        self.xml.push_str("<p:pic><p:nvPicPr>");
        self.non_visual(&picture.name, &picture.description);
        let _ = write!(
            self.xml,
            r#"<p:cNvPicPr><a:picLocks noChangeAspect="1"/></p:cNvPicPr><p:nvPr/></p:nvPicPr><p:blipFill><a:blip r:embed="rId{}"/><a:stretch><a:fillRect/></a:stretch></p:blipFill><p:spPr>"#,
            index + 3
        );
        let f = picture.frame;
        xfrm(&mut self.xml, f.x, f.y, f.cx, f.cy);
        self.xml
            .push_str(r#"<a:prstGeom prst="rect"><a:avLst/></a:prstGeom></p:spPr></p:pic>"#);
    }

    fn table(&mut self, table: &Table) {
        self.xml.push_str("<p:graphicFrame><p:nvGraphicFramePr>");
        self.non_visual(&table.name, "");
        self.xml.push_str(
            r#"<p:cNvGraphicFramePr><a:graphicFrameLocks noGrp="1"/></p:cNvGraphicFramePr><p:nvPr/></p:nvGraphicFramePr>"#,
        );
        let f = table.frame;
        let _ = write!(
            self.xml,
            r#"<p:xfrm><a:off x="{}" y="{}"/><a:ext cx="{}" cy="{}"/></p:xfrm>"#,
            f.x, f.y, f.cx, f.cy
        );
        let _ = write!(
            self.xml,
            r#"<a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/table"><a:tbl><a:tblPr firstRow="{}" bandRow="0"/><a:tblGrid>"#,
            u8::from(table.header)
        );
        for width in &table.columns {
            let _ = write!(self.xml, r#"<a:gridCol w="{}"/>"#, width.max(&0));
        }
        self.xml.push_str("</a:tblGrid>");
        for (r, row) in table.rows.iter().enumerate() {
            let _ = write!(self.xml, r#"<a:tr h="{}">"#, table.row_height.max(0));
            for cell in row {
                self.xml
                    .push_str("<a:tc><a:txBody><a:bodyPr/><a:lstStyle/>");
                self.paragraphs(cell);
                let _ = write!(
                    self.xml,
                    r#"</a:txBody><a:tcPr marL="{TABLE_CELL_MARGIN_X_EMU}" marR="{TABLE_CELL_MARGIN_X_EMU}" marT="{TABLE_CELL_MARGIN_Y_EMU}" marB="{TABLE_CELL_MARGIN_Y_EMU}" anchor="ctr">"#
                );
                for side in ["lnL", "lnR", "lnT", "lnB"] {
                    let _ = write!(self.xml, r#"<a:{side} w="9525" cap="flat" cmpd="sng">"#);
                    solid_fill(&mut self.xml, table.border);
                    let _ = write!(self.xml, "</a:{side}>");
                }
                if table.header && r == 0 {
                    solid_fill(&mut self.xml, table.header_fill);
                } else {
                    self.xml.push_str("<a:noFill/>");
                }
                self.xml.push_str("</a:tcPr></a:tc>");
            }
            self.xml.push_str("</a:tr>");
        }
        self.xml
            .push_str("</a:tbl></a:graphicData></a:graphic></p:graphicFrame>");
    }

    fn group(&mut self, group: &Group) {
        if group.items.is_empty() {
            return;
        }
        self.xml.push_str("<p:grpSp><p:nvGrpSpPr>");
        self.non_visual(&group.name, "");
        let f = group.frame;
        let _ = write!(
            self.xml,
            r#"<p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr><a:xfrm><a:off x="{x}" y="{y}"/><a:ext cx="{cx}" cy="{cy}"/><a:chOff x="{x}" y="{y}"/><a:chExt cx="{cx}" cy="{cy}"/></a:xfrm></p:grpSpPr>"#,
            x = f.x,
            y = f.y,
            cx = f.cx,
            cy = f.cy
        );
        for item in &group.items {
            self.item(item);
        }
        self.xml.push_str("</p:grpSp>");
    }
}

fn end_paragraph(out: &mut String, size: Option<u32>, language: &str) {
    out.push_str("<a:endParaRPr");
    if !language.is_empty() {
        let _ = write!(out, r#" lang="{language}""#);
    }
    if let Some(size) = size {
        let _ = write!(out, r#" sz="{}""#, size.clamp(100, 400_000));
    }
    out.push_str(" dirty=\"0\"/>");
}

fn paragraph_xml(out: &mut String, paragraph: &Paragraph, language: &str) {
    out.push_str("<a:p><a:pPr");
    let size = paragraph
        .runs
        .iter()
        .map(|r| r.style.size)
        .max()
        .unwrap_or(1800)
        .clamp(100, 400_000);
    if paragraph.bullet != Bullet::None {
        // A hanging indent of 1.3 em per level, in EMU (1 pt = 12,700 EMU; size is centipoints).
        let step = size as i64 * 127 * 13 / 10;
        let margin = step * (paragraph.level as i64 + 1);
        let _ = write!(out, r#" marL="{margin}" indent="-{step}""#);
    } else if paragraph.level > 0 {
        let step = size as i64 * 127 * 13 / 10;
        let _ = write!(
            out,
            r#" marL="{}" indent="0""#,
            step * paragraph.level as i64
        );
    } else {
        out.push_str(r#" marL="0" indent="0""#);
    }
    let align = match paragraph.align {
        Align::Left => "l",
        Align::Center => "ctr",
        Align::Right => "r",
    };
    let _ = write!(out, r#" algn="{align}">"#);
    if paragraph.space_before > 0 {
        let _ = write!(
            out,
            r#"<a:spcBef><a:spcPts val="{}"/></a:spcBef>"#,
            paragraph.space_before.min(158_400)
        );
    }
    match paragraph.bullet {
        Bullet::None => out.push_str("<a:buNone/>"),
        Bullet::Disc => out.push_str(r#"<a:buFont typeface="Arial"/><a:buChar char="•"/>"#),
        Bullet::Number(start) => {
            let _ = write!(
                out,
                r#"<a:buFont typeface="+mj-lt"/><a:buAutoNum type="arabicPeriod" startAt="{}"/>"#,
                start.clamp(1, 32_767)
            );
        }
    }
    out.push_str("</a:pPr>");
    for run in &paragraph.runs {
        let mut lines = run.text.split('\n').peekable();
        while let Some(line) = lines.next() {
            if !line.is_empty() {
                out.push_str("<a:r>");
                run_properties(out, run, language, "a:rPr");
                out.push_str("<a:t>");
                push_escaped(out, line);
                out.push_str("</a:t></a:r>");
            }
            if lines.peek().is_some() {
                out.push_str("<a:br>");
                run_properties(out, run, language, "a:rPr");
                out.push_str("</a:br>");
            }
        }
    }
    end_paragraph(out, paragraph.runs.last().map(|r| r.style.size), language);
    out.push_str("</a:p>");
}

fn run_properties(out: &mut String, run: &Run, language: &str, tag: &str) {
    let style = &run.style;
    let _ = write!(out, "<{tag}");
    if !language.is_empty() {
        let _ = write!(out, r#" lang="{language}""#);
    }
    let _ = write!(out, r#" sz="{}""#, style.size.clamp(100, 400_000));
    if style.bold {
        out.push_str(r#" b="1""#);
    }
    if style.italic {
        out.push_str(r#" i="1""#);
    }
    if style.strike {
        out.push_str(r#" strike="sngStrike""#);
    }
    out.push_str(r#" dirty="0">"#);
    if let Some(color) = style.color {
        solid_fill(out, color);
    }
    let typeface = match style.typeface {
        Typeface::Body => None,
        Typeface::Monospace => Some(MONOSPACE_FONT),
        Typeface::Math => Some(MATH_FONT),
    };
    if let Some(typeface) = typeface {
        let _ = write!(
            out,
            r#"<a:latin typeface="{typeface}"/><a:cs typeface="{typeface}"/>"#
        );
    }
    let _ = write!(out, "</{tag}>");
}

fn notes_slide(notes: &str, language: &str) -> String {
    let mut xml = String::from(XML_HEADER);
    let _ = write!(xml, "<p:notes {NS}><p:cSld><p:spTree>");
    xml.push_str(GROUP_ROOT);
    xml.push_str(r#"<p:sp><p:nvSpPr><p:cNvPr id="2" name="Slide Image 1"/><p:cNvSpPr><a:spLocks noGrp="1" noRot="1" noChangeAspect="1"/></p:cNvSpPr><p:nvPr><p:ph type="sldImg"/></p:nvPr></p:nvSpPr><p:spPr/></p:sp>"#);
    xml.push_str(r#"<p:sp><p:nvSpPr><p:cNvPr id="3" name="Notes Placeholder 2"/><p:cNvSpPr><a:spLocks noGrp="1"/></p:cNvSpPr><p:nvPr><p:ph type="body" idx="1"/></p:nvPr></p:nvSpPr><p:spPr/><p:txBody><a:bodyPr/><a:lstStyle/>"#);
    // `split` yields one (empty) line for empty notes: the body always has a paragraph.
    for line in notes.split('\n') {
        xml.push_str("<a:p>");
        if !line.is_empty() {
            xml.push_str("<a:r>");
            if language.is_empty() {
                xml.push_str(r#"<a:rPr dirty="0"/>"#);
            } else {
                let _ = write!(xml, r#"<a:rPr lang="{language}" dirty="0"/>"#);
            }
            xml.push_str("<a:t>");
            push_escaped(&mut xml, line);
            xml.push_str("</a:t></a:r>");
        }
        end_paragraph(&mut xml, None, language);
        xml.push_str("</a:p>");
    }
    xml.push_str("</p:txBody></p:sp></p:spTree></p:cSld><p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:notes>");
    xml
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_written_in_utc_w3c_form() {
        assert_eq!(w3c_date(0), "1970-01-01T00:00:00Z");
        assert_eq!(w3c_date(1_764_633_600_000), "2025-12-02T00:00:00Z");
        assert_eq!(
            w3c_date(951_782_400_000 + 3_723_000),
            "2000-02-29T01:02:03Z"
        );
    }

    #[test]
    fn only_well_formed_language_tags_reach_the_file() {
        assert_eq!(language_tag("zh-CN"), "zh-CN");
        assert_eq!(language_tag(" en "), "en");
        assert_eq!(language_tag("en\" onload=\"x"), "");
        assert_eq!(language_tag(""), "");
    }
}
