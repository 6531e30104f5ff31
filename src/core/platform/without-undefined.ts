/** `T` with each field that may hold `undefined` made optional instead (absent, never `undefined`). */
export type WithoutUndefined<T> = {
  [K in keyof T as undefined extends T[K] ? never : K]: T[K];
} & {
  [K in keyof T as undefined extends T[K] ? K : never]?: Exclude<T[K], undefined>;
};

/**
 * The fields of `value` that hold something: a parsed body or query, or options mapped from
 * flags, hold the ones not given as `key: undefined`, which a spread over defaults would copy,
 * a store would keep as a key and a request would send. One helper for the api and the CLI.
 */
export function withoutUndefined<T extends object>(value: T): WithoutUndefined<T> {
  return Object.fromEntries(
    Object.entries(value).filter(([, item]) => item !== undefined),
  ) as WithoutUndefined<T>;
}
