import { parseQuantity } from "./quantity";

it("parses Kubernetes quantities", () => {
  expect(parseQuantity("250m")).toBeCloseTo(0.25);
  expect(parseQuantity("2")).toBe(2);
  expect(parseQuantity("1Gi")).toBe(2 ** 30);
  expect(parseQuantity("1G")).toBe(1e9);
  expect(parseQuantity("1e3")).toBe(1000);
  expect(parseQuantity("lots")).toBeNull();
});
