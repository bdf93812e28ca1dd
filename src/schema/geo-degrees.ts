/**
 * A position field's string form, as the service reads it (PositionDataType.fromString): degrees with compass
 * directions (`N37.4;W122.0`, `N63.25;E10o25'30`, either order, `;` or space between), else `x;y` in integer
 * micro-degrees. Returns the reason the degrees parser gives when neither reads, or undefined. Pure: no I/O.
 */

/** The service's message for a position string it refuses, or undefined when it reads. */
export function geoStringError(text: string): string | undefined {
  const reason = degreesError(text);
  if (reason === undefined) return undefined;
  const parts = javaSplit(text, ';');
  if (parts.length === 2 && parts.every((p) => isJavaInt(p))) return undefined;
  return `Could not parse '${text}' as geo coordinates: ${reason}`;
}

/** Java's String.split: trailing empty strings are dropped. */
function javaSplit(text: string, sep: string): string[] {
  const parts = text.split(sep);
  while (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
  return parts;
}

function isJavaInt(text: string): boolean {
  if (!/^[+-]?\d+$/.test(text)) return false;
  const n = BigInt(text);
  return n >= -2147483648n && n <= 2147483647n;
}

/** Java's Double.toString for the degree values the parser prints. */
export function javaDoubleText(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? 'Infinity' : '-Infinity';
  const abs = Math.abs(n);
  if (abs === 0 || (abs >= 1e-3 && abs < 1e7)) return Number.isInteger(n) ? `${n}.0` : String(n);
  const [mantissa, exponent] = n.toExponential().split('e');
  return `${mantissa.includes('.') ? mantissa : `${mantissa}.0`}E${Number(exponent)}`;
}

class DegreesError extends Error {}

/** The degrees parser's reason for refusing `text`, or undefined when it reads a latitude and a longitude. */
function degreesError(text: string): string | undefined {
  try {
    readDegrees(text);
    return undefined;
  } catch (err) {
    if (err instanceof DegreesError) return err.message;
    throw err;
  }
}

const end = '\0';

function readDegrees(text: string): void {
  let pos = 0;
  const next = (): string => {
    if (pos === text.length) {
      pos++;
      return end;
    }
    if (pos > text.length) throw new DegreesError('position after end of string');
    return text[pos++];
  };
  const isDigit = (c: string): boolean => c >= '0' && c <= '9';
  const fail = (reason: string): never => {
    throw new DegreesError(reason);
  };
  let ch = next();
  let latSet = false;
  let lngSet = false;
  let degrees = 0;
  let minutes = 0;
  let seconds = 0;
  let degSet = false;
  let minSet = false;
  let secSet = false;
  let dirSet = false;
  let foundDot = false;
  let foundDigits = false;
  let findingLat = false;
  let findingLng = false;
  let sign = 0;
  do {
    let valid = false;
    let accum = 0;
    if (isDigit(ch) || ch === '.') {
      valid = true;
      let divider = 1;
      while (isDigit(ch)) {
        foundDigits = true;
        accum = accum * 10 + (ch.charCodeAt(0) - 48);
        ch = next();
      }
      if (ch === '.') {
        foundDot = true;
        ch = next();
        while (isDigit(ch)) {
          foundDigits = true;
          accum = accum * 10 + (ch.charCodeAt(0) - 48);
          divider *= 10;
          ch = next();
        }
      }
      if (!foundDigits) fail('just a . is not a valid number');
      accum /= divider;
    }
    if (ch === '\u00b0' || ch === 'o') {
      valid = true;
      if (degSet) fail('degrees sign only valid just after degrees');
      if (!foundDigits) fail('must have number before degrees sign');
      if (foundDot) fail('cannot have fractional degrees before degrees sign');
      ch = next();
    }
    if (ch === "'") {
      if (minSet || !degSet || !foundDigits) fail('minutes sign only valid just after minutes');
      if (foundDot) fail('cannot have fractional minutes before minutes sign');
      ch = next();
    }
    if (foundDigits) {
      if (!degSet) {
        degrees = accum;
        degSet = true;
        if (foundDot) minSet = secSet = true;
      } else if (!minSet) {
        minutes = accum;
        minSet = true;
        if (foundDot) secSet = true;
      } else if (!secSet) {
        seconds = accum;
        secSet = true;
      } else fail('extra number after full field');
      foundDot = foundDigits = false;
    }
    if (ch === 'N' || ch === 'S' || ch === 'E' || ch === 'W') {
      valid = true;
      if (dirSet) fail(`already set direction once, cannot add direction: ${ch}`);
      dirSet = true;
      sign = ch === 'S' || ch === 'W' ? -1 : 1;
      if (ch === 'E' || ch === 'W') findingLng = true;
      else findingLat = true;
      ch = next();
    }
    if (ch === end || ch === ';' || ch === ' ') {
      valid = true;
      if (!dirSet) fail('end of field without any compass direction seen');
      if (!degSet) fail('end of field without any number seen');
      degrees = (degrees + minutes / 60 + seconds / 3600) * sign;
      if (findingLat) {
        if (latSet) fail('found latitude (N or S) twice');
        if (degrees < -90 || degrees > 90) fail(`out of range [-90,+90]: ${javaDoubleText(degrees)}`);
        latSet = true;
      } else if (findingLng) {
        if (lngSet) fail('found longitude (E or W) twice');
        if (degrees < -180 || degrees > 180) fail(`out of range [-180,+180]: ${javaDoubleText(degrees)}`);
        lngSet = true;
      } else fail('no direction found');
      degrees = minutes = seconds = sign = 0;
      degSet = minSet = secSet = dirSet = foundDot = foundDigits = findingLat = findingLng = false;
      if (ch === end) break;
      ch = next();
    }
    if (!valid) fail(`invalid character: ${ch}`);
  } while (ch !== end);
  if (!latSet) fail('missing latitude');
  if (!lngSet) fail('missing longitude');
}
