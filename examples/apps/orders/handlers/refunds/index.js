// Records refunds; a CommonJS module, found as handlers/refunds/index.js.
exports.onRefund = async function onRefund(event) {
  const order = event.new_image;
  const partial = order.status === "PARTIALLY_REFUNDED" ? "partial " : "";
  console.log(`${partial}refund of ${order.refund_amount} for order ${order.id}`);
};
